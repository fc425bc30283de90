package eval

import (
	"errors"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// fmtPieces are the bits random formats and inputs are made of: every
// keyword, prefixes and suffixes, quotes, backslashes, separators, digits.
var fmtPieces = func() []string {
	ps := []string{"FM", "fm", "TH", "th", "SP", "TM", "FX", `"`, `\`, `\"`, " ", "-", ":", ".", ",", "/", "T", "x", "1", "12", "2024", "-3", "+", "é"}
	for _, k := range dchKeys {
		ps = append(ps, k.name)
	}
	for _, k := range numKeys {
		ps = append(ps, k.name)
	}
	for _, m := range monthsFull {
		ps = append(ps, m, m[:3])
	}
	return ps
}()

func randomText(r *rand.Rand) string {
	var b strings.Builder
	for n := r.Intn(8); n >= 0; n-- {
		b.WriteString(fmtPieces[r.Intn(len(fmtPieces))])
	}
	return b.String()
}

// TestFormattingNeverPanics feeds random formats and inputs to to_char
// and to_timestamp's machinery: each answer is a string or a
// *pgerror.Error, never a panic.
func TestFormattingNeverPanics(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	nums := []types.Value{types.Int4(0), types.Int4(-7), types.Int8(1 << 62), {T: types.TNumeric, S: "-0.0049"},
		{T: types.TNumeric, S: "123456.789"}, types.FloatValue(2.5, types.TFloat8), types.FloatValue(-1e300, types.TFloat8)}
	at := time.Date(2024, 2, 29, 23, 59, 58, 999999000, time.UTC)
	isPG := func(err error) {
		t.Helper()
		var pe *pgerror.Error
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("not a *pgerror.Error: %v", err)
		}
	}
	for i := 0; i < 20000; i++ {
		f := randomText(r)
		_, err := dchToChar(parseFormat(f, true), at, "UTC")
		isPG(err)
		if nodes, d, err := numFormat(f); err == nil {
			number, sign, pre, err := numDigits(nums[i%len(nums)], d)
			isPG(err)
			if err == nil {
				_, err = numToChar(nodes, d, number, sign, pre)
				isPG(err)
			}
		} else {
			isPG(err)
		}
		for _, dateOnly := range []bool{false, true} {
			_, err = toTimestamp(randomText(r), f, dateOnly)
			isPG(err)
		}
	}
}

// TestToCharNumberWidths checks the digit string's preparation: blanks
// before a short number, '#'s for one too long.
func TestToCharNumberWidths(t *testing.T) {
	for _, c := range []struct {
		v      types.Value
		format string
		want   string
	}{
		{types.Int4(5), "999", "   5"},
		{types.Int4(-5), "999", "  -5"},
		{types.Int4(1234), "999", " ###"},
		{types.Value{T: types.TNumeric, S: "2.345"}, "9.99", " 2.35"},
		{types.Value{T: types.TNumeric, S: "-2.345"}, "FM9.99", "-2.35"},
	} {
		nodes, d, err := numFormat(c.format)
		if err != nil {
			t.Fatal(err)
		}
		number, sign, pre, err := numDigits(c.v, d)
		if err != nil {
			t.Fatal(err)
		}
		got, err := numToChar(nodes, d, number, sign, pre)
		if err != nil || got != c.want {
			t.Errorf("to_char(%s, %q) = %q, %v; want %q", c.v.Debug(), c.format, got, err, c.want)
		}
	}
}
