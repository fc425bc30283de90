package sqllogic

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestRewriteKeepsFiles: rendering every file from its own expectations
// gives back the file byte for byte, so -rewrite changes nothing but the
// answers PostgreSQL gives differently (comments, blank lines, directives
// and SQL are kept).
func TestRewriteKeepsFiles(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(corpusDir, "*.test"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		f, err := parseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var outs []outcome
		for _, r := range f.records() {
			outs = append(outs, outcome{code: r.wantErr, rows: r.want})
		}
		want, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.render(outs); !bytes.Equal(got, want) {
			t.Errorf("%s: rendered from its own expectations, it is not the same file:\n%s", p, got)
		}
	}
}

// TestParseErrors: malformed records are refused with their line.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"statement maybe\nSELECT 1\n", ":1: unknown directive"},
		{"statement error 235\nSELECT 1\n", ":1: \"235\" is not a SQLSTATE"},
		{"query\nSELECT 1\n", ":1: query without ----"},
		{"statement ok\nSELECT 1\n----\n1\n", ":3: ---- after a directive that expects no rows"},
		{"# c\n\nquery\n\n", ":3: directive without SQL"},
	} {
		p := filepath.Join(t.TempDir(), "x.test")
		if err := os.WriteFile(p, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := parseFile(p)
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
			t.Errorf("%q: got %v, want an error containing %q", tc.text, err, tc.want)
		}
	}
}
