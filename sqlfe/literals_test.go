package sqlfe

import "testing"

// Which texts are scanned for PostgreSQL 16's numeric literals: a name
// with digits and an underscore (user0_) is not, a number is. (What the
// error says is in testdata/sql/literals.test, checked against
// PostgreSQL 15.)
func TestMayHaveNewLiteral(t *testing.T) {
	for s, want := range map[string]bool{
		"SELECT 0x10": true, "SELECT 1_000": true, "SELECT 0B1": true, "SELECT 12.5_1": true, "SELECT -0o7": true,
		"SELECT user0_.id FROM users user0_": false, "SELECT 10, 0, 1.5e3": false, "SELECT t1_x FROM t1_x": false,
		"SELECT 'x'": false, "": false,
	} {
		if got := mayHaveNewLiteral(s); got != want {
			t.Errorf("mayHaveNewLiteral(%q) = %v, want %v", s, got, want)
		}
	}
}
