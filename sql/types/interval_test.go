package types

import (
	"bufio"
	"encoding/hex"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled/sql/pgerror"
)

const tsLayout = "2006-01-02 15:04:05.999999"

// TestIntervalAgainstPostgres replays testdata/interval.expected: each
// case of interval.cases with PostgreSQL 15's answer beside it (written
// by testdata/gen.sh interval), so every expectation here is PostgreSQL's.
func TestIntervalAgainstPostgres(t *testing.T) {
	replayExpected(t, "testdata/interval.expected", 100, evalIntervalCase)
}

// replayExpected runs each line of a testdata/*.expected file (kind, two
// arguments, PostgreSQL's answer or "ERROR sqlstate") through eval, as a
// subtest, and requires at least min lines.
func replayExpected(t *testing.T, path string, min int, eval func(t *testing.T, kind, a, b string) (string, error)) {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		require.Len(t, fields, 4, "line %q", sc.Text())
		kind, a, b, want := fields[0], fields[1], fields[2], fields[3]
		n++
		t.Run(kind+"/"+a+"/"+b, func(t *testing.T) {
			got, err := eval(t, kind, a, b)
			if code, ok := strings.CutPrefix(want, "ERROR "); ok {
				var ie *pgerror.Error
				require.Error(t, err, "got %q", got)
				require.True(t, errors.As(err, &ie), "error %v is not a *pgerror.Error", err)
				require.Equal(t, code, ie.Code, "error %v", err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, want, got)
		})
	}
	require.NoError(t, sc.Err())
	require.Greater(t, n, min)
}

func evalIntervalCase(t *testing.T, kind, a, b string) (string, error) {
	iv := func(s string) Interval {
		v, err := ParseInterval(s)
		require.NoError(t, err, "interval %q", s)
		return v
	}
	ts := func(s string) time.Time {
		v, err := time.Parse(tsLayout, s)
		require.NoError(t, err)
		return v
	}
	fl := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err)
		return v
	}
	out := func(v Interval, err error) (string, error) {
		if err != nil {
			return "", err
		}
		return FormatInterval(v), nil
	}
	switch kind {
	case "in":
		return out(ParseInterval(a))
	case "add":
		return AddIntervalToTime(ts(a), iv(b)).Format(tsLayout), nil
	case "sub":
		return out(SubTimes(ts(a), ts(b)))
	case "mul":
		return out(MulInterval(iv(a), fl(b)))
	case "div":
		return out(DivInterval(iv(a), fl(b)))
	case "justify_hours":
		return out(JustifyHours(iv(a)))
	case "justify_days":
		return out(JustifyDays(iv(a)))
	case "justify_interval":
		return out(JustifyInterval(iv(a)))
	case "extract":
		return ExtractInterval(a, iv(b))
	case "trunc":
		return out(TruncInterval(a, iv(b)))
	case "cmp":
		return strconv.Itoa(CompareIntervals(iv(a), iv(b))), nil
	case "send":
		return hex.EncodeToString(AppendIntervalBinary(nil, iv(a))), nil
	}
	t.Fatalf("unknown case kind %q", kind)
	return "", nil
}

// TestIntervalTextRoundTrip: what FormatInterval prints, ParseInterval
// reads back to the same fields (interval_out then interval_in is the
// identity in PostgreSQL too), and the binary form likewise.
func TestIntervalTextRoundTrip(t *testing.T) {
	for _, v := range []Interval{
		{}, {Months: 14, Days: -3, Micros: 14706500000}, {Months: -14}, {Days: -1, Micros: 7200000000},
		{Micros: -1}, {Micros: 1}, {Months: 2147483647, Days: 2147483647, Micros: 9223372036854775807},
		{Months: -2147483648, Days: -2147483648, Micros: -9223372036854775807},
		{Days: 1, Micros: -1}, {Micros: 360000000000},
	} {
		s := FormatInterval(v)
		back, err := ParseInterval(s)
		require.NoError(t, err, "%+v printed as %q", v, s)
		require.Equal(t, v, back, "%q", s)
		bin, err := ParseIntervalBinary(AppendIntervalBinary(nil, v))
		require.NoError(t, err)
		require.Equal(t, v, bin)
	}
	_, err := ParseIntervalBinary(make([]byte, 15))
	require.Error(t, err)
}

// TestIntervalCompareIsATotalOrder: the span comparison agrees with
// exact arithmetic in big integers on values past int64's microseconds.
func TestIntervalCompareIsATotalOrder(t *testing.T) {
	vals := []Interval{
		{Months: 2147483647}, {Days: 2147483647}, {Micros: 9223372036854775807}, {Micros: -9223372036854775807},
		{Months: -2147483648}, {Months: 1}, {Days: 30}, {Micros: 30 * usecsPerDay}, {Days: 31, Micros: -usecsPerDay},
		{Days: -1, Micros: usecsPerDay}, {},
	}
	exact := func(v Interval) float64 { // exact enough to order these
		return (float64(v.Months)*30+float64(v.Days))*float64(usecsPerDay) + float64(v.Micros)
	}
	for _, a := range vals {
		for _, b := range vals {
			want := 0
			if exact(a) < exact(b) {
				want = -1
			} else if exact(a) > exact(b) {
				want = 1
			}
			require.Equal(t, want, CompareIntervals(a, b), "%+v vs %+v", a, b)
		}
	}
}

// FuzzParseInterval: any input is an interval or a *pgerror.Error, never
// a panic, and an accepted one prints to text that reads back the same.
func FuzzParseInterval(f *testing.F) {
	for _, s := range []string{"1 year 2 mons", "-1:30", "P1Y2M3DT4H5M6S", "@ 1 hour ago", "1-2 3 4:05:06", "1.5 weeks", "99999999999999999999 s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseInterval(s)
		if err != nil {
			var ie *pgerror.Error
			if !errors.As(err, &ie) {
				t.Fatalf("%q: error %v is not a *pgerror.Error", s, err)
			}
			return
		}
		back, err := ParseInterval(FormatInterval(v))
		if err != nil || back != v {
			t.Fatalf("%q → %+v → %q → %+v, %v", s, v, FormatInterval(v), back, err)
		}
	})
}
