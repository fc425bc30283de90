package types

import (
	"bufio"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled/sql/pgerror"
)

// TestTimeOfDayAgainstPostgres replays testdata/timeofday.expected,
// PostgreSQL 15's answers to timeofday.cases (testdata/gen.sh timeofday).
func TestTimeOfDayAgainstPostgres(t *testing.T) {
	f, err := os.Open("testdata/timeofday.expected")
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
			tod := func(s string) TimeOfDay {
				v, err := ParseTimeOfDay(s)
				require.NoError(t, err, "time %q", s)
				return v
			}
			iv := func(s string) Interval {
				v, err := ParseInterval(s)
				require.NoError(t, err, "interval %q", s)
				return v
			}
			var got string
			var err error
			switch kind {
			case "tin":
				var v TimeOfDay
				if v, err = ParseTimeOfDay(a); err == nil {
					got = FormatTimeOfDay(v)
				}
			case "tadd":
				got = FormatTimeOfDay(AddIntervalToTimeOfDay(tod(a), iv(b)))
			case "tsub":
				got = FormatInterval(SubTimesOfDay(tod(a), tod(b)))
			case "tat":
				d, perr := time.Parse("2006-01-02", a)
				require.NoError(t, perr)
				got = AtTimeOfDay(d, tod(b)).Format(tsLayout)
			case "textract":
				got, err = ExtractTimeOfDay(a, tod(b))
			case "tsend":
				got = hex.EncodeToString(AppendTimeOfDayBinary(nil, tod(a)))
			default:
				t.Fatalf("unknown case kind %q", kind)
			}
			if code, ok := strings.CutPrefix(want, "ERROR "); ok {
				var ie *pgerror.Error
				require.Error(t, err, "got %q", got)
				require.True(t, errors.As(err, &ie), "error %v", err)
				require.Equal(t, code, ie.Code, "error %v", err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, want, got)
		})
	}
	require.NoError(t, sc.Err())
	require.Greater(t, n, 40)
}

func TestTimeOfDayRoundTrip(t *testing.T) {
	for _, v := range []TimeOfDay{0, 1, maxTimeOfDay, maxTimeOfDay - 1, 47655500000} {
		back, err := ParseTimeOfDay(FormatTimeOfDay(v))
		require.NoError(t, err)
		require.Equal(t, v, back)
		bin, err := ParseTimeOfDayBinary(AppendTimeOfDayBinary(nil, v))
		require.NoError(t, err)
		require.Equal(t, v, bin)
	}
	for _, b := range [][]byte{AppendTimeOfDayBinary(nil, maxTimeOfDay+1), AppendTimeOfDayBinary(nil, -1), {1, 2}} {
		_, err := ParseTimeOfDayBinary(b)
		require.Error(t, err, "%x", b)
	}
}
