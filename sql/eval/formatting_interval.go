package eval

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// to_char(interval, text), as PostgreSQL 15's interval_to_char: the
// interval's fields as interval2itm splits them (years and months of its
// months, its days, and hours that may pass 24, minutes, seconds and
// microseconds of its time, each negative with a negative part), printed
// by DCH_to_char with is_interval set: no year adjustment for BC, widths
// one wider for a negative field, DDD the span in 30-day months, the ISO
// and Julian patterns from date2j's arithmetic on those fields, and 22007
// for the patterns a calendar date needs (month and day names, AD/BC, D,
// ID, the time zone ones).

// itmFields is struct pg_itm with the tm_yday interval_to_char sets.
type itmFields struct {
	year, mon, mday, hour, min, sec, usec, yday int
}

func intervalFields(iv types.Interval) itmFields {
	f := itmFields{year: int(iv.Months / 12), mon: int(iv.Months % 12), mday: int(iv.Days)}
	t := iv.Micros
	f.hour = int(t / 3600e6)
	t -= int64(f.hour) * 3600e6
	f.min = int(t / 60e6)
	t -= int64(f.min) * 60e6
	f.sec = int(t / 1e6)
	f.usec = int(t - int64(f.sec)*1e6)
	f.yday = (f.year*12+f.mon)*30 + f.mday
	return f
}

// date2j is PostgreSQL's date2j, whose arithmetic takes any fields.
func date2j(year, month, day int) int {
	if month > 2 {
		month++
		year += 4800
	} else {
		month += 13
		year += 4799
	}
	century := year / 100
	j := year*365 - 32167
	j += year/4 - century + century/4
	return j + 7834*month/256 + day
}

// j2day is the weekday of Julian day j (0 Sunday).
func j2day(j int) int {
	j = (j + 1) % 7
	if j < 0 {
		j += 7
	}
	return j
}

// isoYearWeek is date2isoyear and date2isoweek.
func isoYearWeek(year, mon, mday int) (int, int) {
	dayn := date2j(year, mon, mday)
	day4 := date2j(year, 1, 4)
	day0 := j2day(day4 - 1)
	if dayn < day4-day0 {
		day4 = date2j(year-1, 1, 4)
		day0 = j2day(day4 - 1)
		year--
	}
	week := (dayn-(day4-day0))/7 + 1
	if week >= 52 {
		day4 = date2j(year+1, 1, 4)
		day0 = j2day(day4 - 1)
		if dayn >= day4-day0 {
			year++
			week = 1
		}
	}
	return year, week
}

// isoweek2j is the Julian day of the Monday of ISO week 1 of year.
func isoweek2j(year int) int {
	day4 := date2j(year, 1, 4)
	return day4 - j2day(day4-1)
}

// signedWidth is DCH_to_char's width for a field: one wider when negative.
func signedWidth(v, w int) int {
	if v < 0 {
		return w + 1
	}
	return w
}

var romanMonthsDown = []string{"XII", "XI", "X", "IX", "VIII", "VII", "VI", "V", "IV", "III", "II", "I"}

// intervalToChar prints interval iv by the format's nodes.
func intervalToChar(nodes []fmtNode, iv types.Interval) (string, error) {
	tm := intervalFields(iv)
	var b strings.Builder
	for _, n := range nodes {
		if n.key == nil {
			b.WriteString(n.char)
			continue
		}
		s := ""
		num := true
		switch id := n.key.id; id {
		case "A.M.", "P.M.", "AM", "PM", "a.m.", "p.m.", "am", "pm":
			pm := tm.hour%24 >= 12
			s, num = map[bool]string{true: "PM", false: "AM"}[pm], false
			if strings.Contains(id, ".") {
				s = s[:1] + "." + s[1:] + "."
			}
			if id == strings.ToLower(id) {
				s = strings.ToLower(s)
			}
		case "HH", "HH12":
			h := tm.hour % 12
			if h == 0 {
				h = 12
			}
			s = padInt(h, signedWidth(tm.hour, 2), n.fm)
		case "HH24":
			s = padInt(tm.hour, signedWidth(tm.hour, 2), n.fm)
		case "MI":
			s = padInt(tm.min, signedWidth(tm.min, 2), n.fm)
		case "SS":
			s = padInt(tm.sec, signedWidth(tm.sec, 2), n.fm)
		case "FF1", "FF2", "FF3", "FF4", "FF5", "FF6", "MS", "US":
			digits := 6
			switch id {
			case "MS":
				digits = 3
			case "US":
			default:
				digits = int(id[2] - '0')
			}
			div := 1
			for i := digits; i < 6; i++ {
				div *= 10
			}
			s = padInt(tm.usec/div, digits, false)
		case "SSSS":
			s = strconv.Itoa(tm.hour*3600 + tm.min*60 + tm.sec)
		case "tz", "TZ", "TZH", "TZM", "OF", "A.D.", "B.C.", "AD", "BC", "a.d.", "b.c.", "ad", "bc",
			"MONTH", "Month", "month", "MON", "Mon", "mon", "DAY", "Day", "day", "DY", "Dy", "dy", "D", "ID":
			return "", &pgerror.Error{Code: pgerror.CodeDatetimeFormat, Message: "invalid format specification for an interval value",
				Hint: "Intervals are not tied to specific calendar dates."}
		case "MM":
			s = padInt(tm.mon, signedWidth(tm.mon, 2), n.fm)
		case "DDD":
			s = padInt(tm.yday, 3, n.fm)
		case "IDDD":
			iy, _ := isoYearWeek(tm.year, tm.mon, tm.mday)
			s = padInt(date2j(tm.year, tm.mon, tm.mday)-isoweek2j(iy)+1, 3, n.fm)
		case "DD":
			s = padInt(tm.mday, 2, n.fm)
		case "WW":
			s = padInt((tm.yday-1)/7+1, 2, n.fm)
		case "IW":
			_, w := isoYearWeek(tm.year, tm.mon, tm.mday)
			s = padInt(w, 2, n.fm)
		case "Q":
			if tm.mon == 0 {
				continue
			}
			s = strconv.Itoa((tm.mon-1)/3 + 1)
		case "CC":
			c := tm.year / 100
			if c <= 99 && c >= -99 {
				s = padInt(c, signedWidth(c, 2), n.fm)
			} else {
				s = strconv.Itoa(c)
			}
		case "Y,YYY":
			s = fmt.Sprintf("%d,%03d", tm.year/1000, tm.year-tm.year/1000*1000)
		case "YYYY", "IYYY", "YYY", "IYY", "YY", "IY", "Y", "I":
			yr := tm.year
			if id[0] == 'I' {
				yr, _ = isoYearWeek(tm.year, tm.mon, tm.mday)
			}
			switch len(id) { // the width by the year, as DCH_to_char has it, even for the ISO year
			case 4:
				s = padInt(yr, signedWidth(tm.year, 4), n.fm)
			case 3:
				s = padInt(yr%1000, signedWidth(tm.year, 3), n.fm)
			case 2:
				s = padInt(yr%100, signedWidth(tm.year, 2), n.fm)
			default:
				s = strconv.Itoa(yr % 10)
			}
		case "RM", "rm":
			if tm.mon == 0 && tm.year == 0 {
				continue
			}
			var m int
			switch {
			case tm.mon == 0 && tm.year >= 0:
				m = 0
			case tm.mon == 0:
				m = 11
			case tm.mon < 0:
				m = -(tm.mon + 1)
			default:
				m = 12 - tm.mon
			}
			s, num = padText(romanMonthsDown[m], 4, n.fm), false
			if id == "rm" {
				s = strings.ToLower(s)
			}
		case "W":
			s = strconv.Itoa((tm.mday-1)/7 + 1)
		case "J":
			s = strconv.Itoa(date2j(tm.year, tm.mon, tm.mday))
		case "FX":
			num = false
		}
		if err := writeField(&b, s, &n, num); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}
