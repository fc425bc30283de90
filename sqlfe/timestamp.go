package sqlfe

import (
	"encoding/binary"
	"fmt"
	"strings"
	"time"
)

// timestamp (without time zone): a Value of type TTimestamp holds its text
// form in S as PostgreSQL prints it with DateStyle ISO ("1830-10-04
// 00:00:00", fractional seconds to the microsecond without trailing
// zeros), which is also what a row stores. Input takes the ISO forms (a
// date, optionally followed by a time after a space or T); comparisons and
// casts to and from text work, arithmetic, BC dates, infinities, time
// zones and timestamp keys are not implemented (0A000).

// pgEpoch is PostgreSQL's timestamp epoch, 2000-01-01 00:00:00.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

var timestampLayouts = []string{
	"2006-01-02",
	"2006-01-02 15:04",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04",
	"2006-01-02T15:04:05.999999999",
}

func parseTimestamp(s string) (time.Time, error) {
	t := strings.TrimSpace(s)
	switch strings.ToLower(t) {
	case "infinity", "-infinity", "epoch", "now", "today", "tomorrow", "yesterday":
		return time.Time{}, notSupported("timestamp %q is not supported", t)
	}
	for _, l := range timestampLayouts {
		v, err := time.Parse(l, t)
		if err == nil {
			// PostgreSQL rounds to the microsecond
			return v.Round(time.Microsecond), nil
		}
		if pe, ok := err.(*time.ParseError); ok && strings.Contains(pe.Message, "out of range") {
			return time.Time{}, &Error{Code: "22008", Message: fmt.Sprintf("date/time field value out of range: %q", s),
				Hint: `Perhaps you need a different "datestyle" setting.`}
		}
	}
	return time.Time{}, errorf(CodeInvalidText, "invalid input syntax for type timestamp: %q", s)
}

func formatTimestamp(v time.Time) string { return v.Format("2006-01-02 15:04:05.999999") }

func timestampValue(v time.Time) Value { return Value{T: TTimestamp, S: formatTimestamp(v)} }

func timestampCmp(a, b Value) int {
	x, err1 := parseTimestamp(a.S)
	y, err2 := parseTimestamp(b.S)
	if err1 != nil || err2 != nil {
		return strings.Compare(a.S, b.S) // cannot happen: values are parsed on the way in
	}
	return x.Compare(y)
}

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
		return Value{}, errorf(CodeInvalidBinary, "incorrect binary data format for type timestamp without time zone")
	}
	us := int64(binary.BigEndian.Uint64(b))
	return timestampValue(time.UnixMicro(us + pgEpoch.UnixMicro()).UTC()), nil
}
