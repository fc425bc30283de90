package eval

import (
	"testing"

	"github.com/tupled/tupled/sql/types"
)

// TestFormatArguments checks format()'s argument walk: positions, widths
// taken from arguments, and too few arguments.
func TestFormatArguments(t *testing.T) {
	for _, c := range []struct {
		args []types.Value
		want string // "" for an error
	}{
		{[]types.Value{types.Text("%*s|"), types.Int4(5), types.Text("a")}, "    a|"},
		{[]types.Value{types.Text("%-*s|"), types.Int4(3), types.Text("a")}, "a  |"},
		{[]types.Value{types.Text("%2$s %1$s"), types.Text("a"), types.Text("b")}, "b a"},
		{[]types.Value{types.Text("%1$s %s"), types.Text("a"), types.Text("b")}, "a b"},
		{[]types.Value{types.Text("%*2$s|"), types.Text("a"), types.Int4(3)}, ""}, // its value would be a third argument
		{[]types.Value{types.Text("%s %s"), types.Text("a")}, ""},
	} {
		got, err := Format(c.args)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("format(%q) = %q, want an error", c.args[0].S, got.S)
		case c.want != "" && (err != nil || got.S != c.want):
			t.Errorf("format(%q) = %q, %v; want %q", c.args[0].S, got.S, err, c.want)
		}
	}
}
