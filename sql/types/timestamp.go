package types

import (
	"encoding/binary"
	"strings"
	"time"

	"github.com/tupled/tupled/sql/pgerror"
)

// timestamp (without time zone): a Value of type TTimestamp holds its text
// form in S as PostgreSQL prints it with DateStyle ISO ("1830-10-04
// 00:00:00", fractional seconds to the microsecond without trailing
// zeros), which is also what a row stores. Input takes the ISO forms (a
// date, optionally followed by a time after a space or T); comparisons and
// casts to and from text work, arithmetic, BC dates (datetime.go);
// infinities, time zones and timestamp keys are not implemented (0A000).

// pgEpoch is PostgreSQL's timestamp epoch, 2000-01-01 00:00:00.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// parseTimestamp reads timestamp input (datetime.go's forms); a time
// zone after the time is ignored, as PostgreSQL's timestamp_in does.
func parseTimestamp(s string) (time.Time, error) {
	t, bc := cutEra(strings.TrimSpace(s))
	t = strings.TrimSpace(t)
	if m := zoneRE.FindStringIndex(t); m != nil && m[0] > 0 && strings.Contains(t[:m[0]], ":") {
		t = t[:m[0]]
	}
	return parseDateTime(withEra(t, bc), "timestamp")
}

func formatTimestamp(v time.Time) string { return formatEra(v, "2006-01-02 15:04:05.999999", "") }

// TimestampValue is the timestamp of v's wall clock, without time zone.
func TimestampValue(v time.Time) Value { return Value{T: TTimestamp, S: formatTimestamp(v)} }

// timestamp_send: microseconds since pgEpoch.
func appendTimestampBinary(dst []byte, s string) []byte {
	v, err := parseTimestamp(s)
	if err != nil {
		return dst
	}
	return binary.BigEndian.AppendUint64(dst, uint64(v.UnixMicro()-pgEpoch.UnixMicro()))
}

func parseTimestampBinary(b []byte) (Value, error) {
	if len(b) != 8 {
		return Value{}, pgerror.Errorf(pgerror.CodeInvalidBinary, "incorrect binary data format for type timestamp without time zone")
	}
	us := int64(binary.BigEndian.Uint64(b))
	return TimestampValue(time.UnixMicro(us + pgEpoch.UnixMicro()).UTC()), nil
}
