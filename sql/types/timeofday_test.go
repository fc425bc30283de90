package types

import (
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTimeOfDayAgainstPostgres replays testdata/timeofday.expected,
// PostgreSQL 15's answers to timeofday.cases (testdata/gen.sh timeofday).
func TestTimeOfDayAgainstPostgres(t *testing.T) {
	replayExpected(t, "testdata/timeofday.expected", 40, evalTimeCase)
}

func evalTimeCase(t *testing.T, kind, a, b string) (string, error) {
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
	switch kind {
	case "tin":
		v, err := ParseTimeOfDay(a)
		if err != nil {
			return "", err
		}
		return FormatTimeOfDay(v), nil
	case "tadd":
		return FormatTimeOfDay(AddIntervalToTimeOfDay(tod(a), iv(b))), nil
	case "tsub":
		return FormatInterval(SubTimesOfDay(tod(a), tod(b))), nil
	case "tat":
		d, err := time.Parse("2006-01-02", a)
		require.NoError(t, err)
		return AtTimeOfDay(d, tod(b)).Format(tsLayout), nil
	case "textract":
		return ExtractTimeOfDay(a, tod(b))
	case "tsend":
		return hex.EncodeToString(AppendTimeOfDayBinary(nil, tod(a))), nil
	}
	t.Fatalf("unknown case kind %q", kind)
	return "", nil
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
