package eval

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// to_char, to_timestamp(text, text) and to_date, as PostgreSQL's
// formatting.c (whose structure this file follows, so the two can be read
// side by side): a format string is parsed into nodes — a keyword (YYYY,
// Month, HH24, 9, G, ...) with its FM/TH prefix and suffix, or a literal
// character (a double-quoted string's characters are literal, a backslash
// quotes the character after it) — and the nodes are walked to print a
// value (dchToChar for dates and times, numToChar for numbers, in the C
// locale: D is '.', G ',', L a space) or to read one (dchFromChar, then
// toTimestamp's assembly of the fields, checked as PostgreSQL checks them:
// 22007 for a malformed field, 22008 for a value out of range).
//
// The number patterns RN (Roman numerals: romanToChar) and EEEE
// (scientific notation: eeeeToChar) print as PostgreSQL's *_to_char
// functions prepare them, outside NUM_processor's digit walk.
//
// to_char of an interval is formatting_interval.go's.
//
// Not implemented (0A000): TZ and OF in
// to_timestamp (PostgreSQL 15 rejects them too). A result before 1 AD
// is a BC timestamp (to_timestamp without a year is in 1 BC).

// fmtKey is a format keyword.
type fmtKey struct {
	name    string
	id      string // the keyword's identity (case variants of a number share one)
	isDigit bool   // it reads digits (is_next_separator's test)
	mode    byte   // 'G' a Gregorian date field, 'I' an ISO week date field, 0 neither
}

// dchKeys are DCH_keywords in PostgreSQL's order: at each position the
// first keyword that matches is taken, so longer ones come first.
var dchKeys = func() []fmtKey {
	var ks []fmtKey
	add := func(name, id string, digit bool, mode byte) {
		ks = append(ks, fmtKey{name, id, digit, mode})
	}
	upper := func() {
		add("A.D.", "A.D.", false, 0)
		add("A.M.", "A.M.", false, 0)
		add("AD", "AD", false, 0)
		add("AM", "AM", false, 0)
		add("B.C.", "B.C.", false, 0)
		add("BC", "BC", false, 0)
		add("CC", "CC", true, 0)
		add("DAY", "DAY", false, 0)
		add("DDD", "DDD", true, 'G')
		add("DD", "DD", true, 'G')
		add("DY", "DY", false, 0)
		add("Day", "Day", false, 0)
		add("Dy", "Dy", false, 0)
		add("D", "D", true, 'G')
		for i := 1; i <= 6; i++ {
			add(fmt.Sprintf("FF%d", i), fmt.Sprintf("FF%d", i), false, 0)
		}
		add("FX", "FX", false, 0)
		add("HH24", "HH24", true, 0)
		add("HH12", "HH12", true, 0)
		add("HH", "HH", true, 0)
		add("IDDD", "IDDD", true, 'I')
		add("ID", "ID", true, 'I')
		add("IW", "IW", true, 'I')
		add("IYYY", "IYYY", true, 'I')
		add("IYY", "IYY", true, 'I')
		add("IY", "IY", true, 'I')
		add("I", "I", true, 'I')
		add("J", "J", true, 0)
		add("MI", "MI", true, 0)
		add("MM", "MM", true, 'G')
		add("MONTH", "MONTH", false, 'G')
		add("MON", "MON", false, 'G')
		add("MS", "MS", true, 0)
		add("Month", "Month", false, 'G')
		add("Mon", "Mon", false, 'G')
		add("OF", "OF", false, 0)
		add("P.M.", "P.M.", false, 0)
		add("PM", "PM", false, 0)
		add("Q", "Q", true, 0)
		add("RM", "RM", false, 'G')
		add("SSSSS", "SSSS", true, 0)
		add("SSSS", "SSSS", true, 0)
		add("SS", "SS", true, 0)
		add("TZH", "TZH", false, 0)
		add("TZM", "TZM", true, 0)
		add("TZ", "TZ", false, 0)
		add("US", "US", true, 0)
		add("WW", "WW", true, 'G')
		add("W", "W", true, 'G')
		add("Y,YYY", "Y,YYY", true, 'G')
		add("YYYY", "YYYY", true, 'G')
		add("YYY", "YYY", true, 'G')
		add("YY", "YY", true, 'G')
		add("Y", "Y", true, 'G')
	}
	upper()
	// the lower-case forms: the same fields, except the ones whose case
	// is the output's (a.m., month, day, ...)
	caseful := map[string]bool{"A.D.": true, "A.M.": true, "AD": true, "AM": true, "B.C.": true, "BC": true,
		"DAY": true, "DY": true, "MONTH": true, "MON": true, "P.M.": true, "PM": true, "RM": true, "TZ": true}
	n := len(ks)
	for _, k := range ks[:n] {
		if k.name != strings.ToUpper(k.name) {
			continue // Day, Dy, Month, Mon: mixed case has no lower twin
		}
		lk := k
		lk.name = strings.ToLower(k.name)
		if caseful[k.id] {
			lk.id = strings.ToLower(k.id)
		}
		ks = append(ks, lk)
	}
	return ks
}()

// numKeys are NUM_keywords in PostgreSQL's order.
var numKeys = func() []fmtKey {
	var ks []fmtKey
	for _, n := range []string{",", ".", "0", "9", "B", "C", "D", "EEEE", "FM", "G", "L", "MI", "PL", "PR", "RN", "SG", "SP", "S", "TH", "V"} {
		ks = append(ks, fmtKey{name: n, id: n})
	}
	for _, n := range []string{"b", "c", "d", "eeee", "fm", "g", "l", "mi", "pl", "pr", "rn", "sg", "sp", "s", "th", "v"} {
		id := strings.ToUpper(n)
		if n == "th" {
			id = "th"
		}
		ks = append(ks, fmtKey{name: n, id: id})
	}
	return ks
}()

// fmtNode is one parsed item of a format.
type fmtNode struct {
	key    *fmtKey // nil: a literal character
	char   string  // the literal character
	sep    bool    // the literal is a separator (DCH: one of ,-./':;, or a space)
	space  bool
	fm, th bool // FM prefix; TH or th suffix
	thUp   bool
}

func isSeparatorChar(c byte) bool {
	// PostgreSQL's is_separator_char: ASCII punctuation other than letters
	// and digits, and not a double quote
	return c < 0x80 && c > 0x20 && c != '"' && !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9')
}

// parseFormat is parse_format: dch selects the date/time keywords (with
// the FM/TM prefixes and TH/th/SP suffixes) over the number keywords.
func parseFormat(f string, dch bool) []fmtNode {
	keys := numKeys
	if dch {
		keys = dchKeys
	}
	var out []fmtNode
	for i := 0; i < len(f); {
		var n fmtNode
		if dch {
			if p := f[i:]; strings.HasPrefix(p, "FM") || strings.HasPrefix(p, "fm") {
				n.fm = true
				i += 2
			} else if strings.HasPrefix(p, "TM") || strings.HasPrefix(p, "tm") {
				i += 2 // translation mode: the C locale's names are the English ones
			}
		}
		if i < len(f) {
			if k := matchKey(f[i:], keys); k != nil {
				n.key = k
				i += len(k.name)
				if dch && i < len(f) {
					switch p := f[i:]; {
					case strings.HasPrefix(p, "TH"):
						n.th, n.thUp = true, true
						i += 2
					case strings.HasPrefix(p, "th"):
						n.th = true
						i += 2
					case strings.HasPrefix(p, "SP"):
						i += 2 // spell mode: not implemented by PostgreSQL either
					}
				}
				out = append(out, n)
				continue
			}
		} else {
			break
		}
		if f[i] == '"' {
			i++
			for i < len(f) {
				if f[i] == '"' {
					i++
					break
				}
				if f[i] == '\\' && i+1 < len(f) {
					i++
				}
				w := charLen(f[i:])
				out = append(out, fmtNode{char: f[i : i+w]})
				i += w
			}
			continue
		}
		if f[i] == '\\' && i+1 < len(f) && f[i+1] == '"' {
			i++
		}
		w := charLen(f[i:])
		c := fmtNode{char: f[i : i+w]}
		if dch && w == 1 && isSeparatorChar(f[i]) {
			c.sep = true
		} else if w == 1 && (f[i] == ' ' || f[i] >= '\t' && f[i] <= '\r') {
			c.space = true
		}
		out = append(out, c)
		i += w
	}
	return out
}

func charLen(s string) int {
	for i := range s {
		if i > 0 {
			return i
		}
	}
	return len(s)
}

func matchKey(s string, keys []fmtKey) *fmtKey {
	if s == "" || s[0] < 32 || s[0] > 126 {
		return nil
	}
	for i := range keys {
		if strings.HasPrefix(s, keys[i].name) {
			return &keys[i]
		}
	}
	return nil
}

var (
	monthsFull = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	daysFull   = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	romanMonth = []string{"I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII"}
)

// ordinal is get_th: the English ordinal suffix of the number s ends with.
func ordinal(s string, upper bool) (string, error) {
	if s == "" || s[len(s)-1] < '0' || s[len(s)-1] > '9' {
		return "", pgerror.Errorf(pgerror.CodeInvalidParamValue, "%q is not a number", s)
	}
	last := s[len(s)-1]
	if len(s) > 1 && s[len(s)-2] == '1' {
		last = 0
	}
	suf := "th"
	switch last {
	case '1':
		suf = "st"
	case '2':
		suf = "nd"
	case '3':
		suf = "rd"
	}
	if upper {
		suf = strings.ToUpper(suf)
	}
	return suf, nil
}

// padInt is sprintf("%0*d", width, v), width 0 under FM.
func padInt(v int, width int, fm bool) string {
	if fm {
		width = 0
	}
	s := strconv.Itoa(v)
	neg := v < 0
	if neg {
		s = s[1:]
		width--
	}
	for len(s) < width {
		s = "0" + s
	}
	if neg {
		s = "-" + s
	}
	return s
}

// padText is sprintf("%*s", -9, s): blank-padded on the right, not under FM.
func padText(s string, width int, fm bool) string {
	if fm {
		return s
	}
	for len(s) < width {
		s += " "
	}
	return s
}

// adjustYear is ADJUST_YEAR: a year as printed, 1 BC for year 0.
func adjustYear(y int) int {
	if y <= 0 {
		return -(y - 1)
	}
	return y
}

// julian is date2j: the Julian day number of a (proleptic Gregorian) date.
func julian(y, m, d int) int {
	return int(time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Unix()/86400) + 2440588
}

// fromJulian is j2date.
func fromJulian(j int) (y, m, d int) {
	t := time.Unix(int64(j-2440588)*86400, 0).UTC()
	return t.Year(), int(t.Month()), t.Day()
}

// isoWeek1 is isoweek2j(year, 1): the Julian day of the Monday of ISO week
// 1 of year.
func isoWeek1(year int) int {
	day4 := julian(year, 1, 4)
	day0 := (day4 - 1 + 1) % 7 // j2day(day4 - 1): 0 Sunday
	return day4 - day0
}

// dchToChar prints t (a timestamp, or a timestamptz in UTC: tz names its
// zone, "" for a timestamp) by the format's nodes.
func dchToChar(nodes []fmtNode, t time.Time, tz string) (string, error) {
	var b strings.Builder
	y, mon, mday := t.Year(), int(t.Month()), t.Day()
	hour, minute, sec := t.Hour(), t.Minute(), t.Second()
	usec := t.Nanosecond() / 1000
	wday, yday := int(t.Weekday()), t.YearDay()
	for _, n := range nodes {
		if n.key == nil {
			b.WriteString(n.char)
			continue
		}
		s := ""
		num := true // a number: TH applies
		switch n.key.id {
		case "A.M.", "P.M.":
			s, num = map[bool]string{true: "P.M.", false: "A.M."}[hour >= 12], false
		case "AM", "PM":
			s, num = map[bool]string{true: "PM", false: "AM"}[hour >= 12], false
		case "a.m.", "p.m.":
			s, num = map[bool]string{true: "p.m.", false: "a.m."}[hour >= 12], false
		case "am", "pm":
			s, num = map[bool]string{true: "pm", false: "am"}[hour >= 12], false
		case "HH", "HH12":
			h := hour % 12
			if h == 0 {
				h = 12
			}
			s = padInt(h, 2, n.fm)
		case "HH24":
			s = padInt(hour, 2, n.fm)
		case "MI":
			s = padInt(minute, 2, n.fm)
		case "SS":
			s = padInt(sec, 2, n.fm)
		case "FF1", "FF2", "FF3", "FF4", "FF5", "FF6", "MS", "US":
			digits := 6 // US
			switch id := n.key.id; id {
			case "MS":
				digits = 3
			case "US":
			default:
				digits = int(id[2] - '0')
			}
			s = padInt(usec/int(math.Pow10(6-digits)), digits, false)
		case "SSSS":
			s = strconv.Itoa(hour*3600 + minute*60 + sec)
		case "tz", "TZ":
			s, num = tz, false
			if n.key.id == "tz" {
				s = strings.ToLower(tz)
			}
		case "TZH":
			s, num = "+00", false
		case "TZM":
			s, num = "00", false
		case "OF":
			s, num = "+"+padInt(0, 2, n.fm), false
		case "A.D.", "B.C.", "AD", "BC", "a.d.", "b.c.", "ad", "bc":
			bc := y <= 0
			switch n.key.id {
			case "A.D.", "B.C.":
				s = map[bool]string{true: "B.C.", false: "A.D."}[bc]
			case "AD", "BC":
				s = map[bool]string{true: "BC", false: "AD"}[bc]
			case "a.d.", "b.c.":
				s = map[bool]string{true: "b.c.", false: "a.d."}[bc]
			default:
				s = map[bool]string{true: "bc", false: "ad"}[bc]
			}
			num = false
		case "MONTH", "Month", "month":
			s, num = padText(caseAs(monthsFull[mon-1], n.key.id), 9, n.fm), false
		case "MON", "Mon", "mon":
			s, num = caseAs(monthsFull[mon-1][:3], n.key.id), false
		case "MM":
			s = padInt(mon, 2, n.fm)
		case "DAY", "Day", "day":
			s, num = padText(caseAs(daysFull[wday], n.key.id), 9, n.fm), false
		case "DY", "Dy", "dy":
			s, num = caseAs(daysFull[wday][:3], n.key.id), false
		case "DDD":
			s = padInt(yday, 3, n.fm)
		case "IDDD":
			iy, _ := t.ISOWeek()
			s = padInt(julian(y, mon, mday)-isoWeek1(iy)+1, 3, n.fm)
		case "DD":
			s = padInt(mday, 2, n.fm)
		case "D":
			s = strconv.Itoa(wday + 1)
		case "ID":
			if wday == 0 {
				s = "7"
			} else {
				s = strconv.Itoa(wday)
			}
		case "WW":
			s = padInt((yday-1)/7+1, 2, n.fm)
		case "IW":
			_, w := t.ISOWeek()
			s = padInt(w, 2, n.fm)
		case "Q":
			s = strconv.Itoa((mon-1)/3 + 1)
		case "CC":
			var c int
			if y > 0 {
				c = (y-1)/100 + 1
			} else {
				c = y/100 - 1
			}
			if c <= 99 && c >= -99 {
				w := 2
				if c < 0 {
					w = 3
				}
				s = padInt(c, w, n.fm)
			} else {
				s = strconv.Itoa(c)
			}
		case "Y,YYY":
			ay := adjustYear(y)
			s = fmt.Sprintf("%d,%03d", ay/1000, ay-ay/1000*1000)
		case "YYYY", "IYYY", "YYY", "IYY", "YY", "IY", "Y", "I":
			yr := y
			if n.key.id[0] == 'I' {
				yr, _ = t.ISOWeek()
			}
			ay := adjustYear(yr)
			switch len(n.key.id) {
			case 4:
				s = padInt(ay, 4, n.fm)
			case 3:
				s = padInt(ay%1000, 3, n.fm)
			case 2:
				s = padInt(ay%100, 2, n.fm)
			default:
				s = strconv.Itoa(ay % 10)
			}
		case "RM", "rm":
			s = padText(romanMonth[mon-1], 4, n.fm)
			if n.key.id == "rm" {
				s = strings.ToLower(s)
			}
			num = false
		case "W":
			s = strconv.Itoa((mday-1)/7 + 1)
		case "J":
			s = strconv.Itoa(julian(y, mon, mday))
		case "FX":
			num = false
		}
		if err := writeField(&b, s, &n, num); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// writeField writes a date/time field's text s, and for a number (num)
// under TH or th its ordinal suffix.
func writeField(b *strings.Builder, s string, n *fmtNode, num bool) error {
	b.WriteString(s)
	if n.th && num {
		suf, err := ordinal(s, n.thUp)
		if err != nil {
			return err
		}
		b.WriteString(suf)
	}
	return nil
}

// caseAs writes name in the case of the keyword: MONTH, Month, month.
func caseAs(name, id string) string {
	switch {
	case id == strings.ToUpper(id):
		return strings.ToUpper(name)
	case id == strings.ToLower(id):
		return strings.ToLower(name)
	}
	return name
}

// ---- numbers ----

const (
	numDecimal = 1 << iota
	numLDecimal
	numZero
	numBlank
	numFill
	numLSign
	numBracket
	numMinus
	numPlus
	numRoman
	numMulti
	numEEEE
)

// numDesc is NUMDesc: what the number format asks for.
type numDesc struct {
	pre, post, multi   int
	lsign              int // -1 before the digits (NUM_LSIGN_PRE), 1 after, 0 none
	preLsignNum        int
	zeroStart, zeroEnd int
	flag               int
}

func (d *numDesc) is(f int) bool { return d.flag&f != 0 }

func fmtSyntax(format string, args ...any) error {
	return pgerror.Errorf(pgerror.CodeSyntax, format, args...)
}

// prepare is NUMDesc_prepare for one keyword node.
func (d *numDesc) prepare(n *fmtNode) error {
	if d.is(numEEEE) && n.key.id != "EEEE" {
		return fmtSyntax(`"EEEE" must be the last pattern used`)
	}
	switch n.key.id {
	case "9":
		if d.is(numBracket) {
			return fmtSyntax(`"9" must be ahead of "PR"`)
		}
		if d.is(numMulti) {
			d.multi++
		} else if d.is(numDecimal) {
			d.post++
		} else {
			d.pre++
		}
	case "0":
		if d.is(numBracket) {
			return fmtSyntax(`"0" must be ahead of "PR"`)
		}
		if !d.is(numZero) && !d.is(numDecimal) {
			d.flag |= numZero
			d.zeroStart = d.pre + 1
		}
		if !d.is(numDecimal) {
			d.pre++
		} else {
			d.post++
		}
		d.zeroEnd = d.pre + d.post
	case "B":
		if d.pre == 0 && d.post == 0 && !d.is(numZero) {
			d.flag |= numBlank
		}
	case "D", ".":
		if n.key.id == "D" {
			d.flag |= numLDecimal
		}
		if d.is(numDecimal) {
			return fmtSyntax("multiple decimal points")
		}
		if d.is(numMulti) {
			return fmtSyntax(`cannot use "V" and decimal point together`)
		}
		d.flag |= numDecimal
	case "FM":
		d.flag |= numFill
	case "S":
		if d.is(numLSign) {
			return fmtSyntax(`cannot use "S" twice`)
		}
		if d.is(numPlus) || d.is(numMinus) || d.is(numBracket) {
			return fmtSyntax(`cannot use "S" and "PL"/"MI"/"SG"/"PR" together`)
		}
		if !d.is(numDecimal) {
			d.lsign, d.preLsignNum = -1, d.pre
			d.flag |= numLSign
		} else if d.lsign == 0 {
			d.lsign = 1
			d.flag |= numLSign
		}
	case "MI", "PL", "SG":
		if d.is(numLSign) {
			return fmtSyntax(`cannot use "S" and %q together`, n.key.id)
		}
		switch n.key.id {
		case "MI":
			d.flag |= numMinus
		case "PL":
			d.flag |= numPlus
		default:
			d.flag |= numMinus | numPlus
		}
	case "PR":
		if d.is(numLSign) || d.is(numPlus) || d.is(numMinus) {
			return fmtSyntax(`cannot use "PR" and "S"/"PL"/"MI"/"SG" together`)
		}
		d.flag |= numBracket
	case "RN":
		d.flag |= numRoman
	case "V":
		if d.is(numDecimal) {
			return fmtSyntax(`cannot use "V" and decimal point together`)
		}
		d.flag |= numMulti
	case "EEEE":
		if d.is(numEEEE) {
			return fmtSyntax(`cannot use "EEEE" twice`)
		}
		if d.is(numBlank | numFill | numLSign | numBracket | numMinus | numPlus | numRoman | numMulti) {
			return fmtSyntax(`"EEEE" is incompatible with other formats`)
		}
		d.flag |= numEEEE
	}
	return nil
}

// numFormat parses a number format and prepares its numDesc.
func numFormat(f string) ([]fmtNode, *numDesc, error) {
	nodes := parseFormat(f, false)
	d := &numDesc{}
	for i := range nodes {
		if nodes[i].key != nil {
			if err := d.prepare(&nodes[i]); err != nil {
				return nil, nil, err
			}
		}
	}
	return nodes, d, nil
}

// romanToChar is to_char with RN or rn, as NUM_processor's Roman
// correction leaves it: the value rounded to an integer in Roman numerals,
// right-aligned in 15 characters (FM: not), or 15 '#'s outside 1 to 3999;
// the format's literal characters stay, and of the other keywords only
// ',', 'G', 'MI', 'PL' and 'L' print (a blank, not under FM) and SG ends
// the output (it writes the sign, which the correction zeroed).
func romanToChar(nodes []fmtNode, d *numDesc, v types.Value) (string, error) {
	var n int64
	switch {
	case types.IsFloat(v.T):
		f := math.RoundToEven(types.FloatOf(v)) // (int) rint(value)
		if f >= 1 && f <= 3999 {
			n = int64(f)
		}
	default:
		i, err := types.Cast(v, types.TInt4) // numeric_round, then numeric_int4 (int84 for a bigint)
		if err != nil {
			return "", err
		}
		n = i.I
	}
	roman := strings.Repeat("#", 15)
	if n >= 1 && n <= 3999 {
		var b strings.Builder
		for _, r := range []struct {
			v int64
			s string
		}{{1000, "M"}, {900, "CM"}, {500, "D"}, {400, "CD"}, {100, "C"}, {90, "XC"}, {50, "L"}, {40, "XL"}, {10, "X"}, {9, "IX"}, {5, "V"}, {4, "IV"}, {1, "I"}} {
			for ; n >= r.v; n -= r.v {
				b.WriteString(r.s)
			}
		}
		roman = b.String()
	}
	fm := d.is(numFill)
	var out strings.Builder
	for _, nd := range nodes {
		if nd.key == nil {
			out.WriteString(nd.char)
			continue
		}
		switch nd.key.id {
		case "RN":
			s := roman
			if nd.key.name == "rn" {
				s = strings.ToLower(s)
			}
			if !fm {
				s = fmt.Sprintf("%15s", s)
			}
			out.WriteString(s)
		case ",", "G", "MI", "PL":
			if !fm {
				out.WriteByte(' ')
			}
		case "L":
			out.WriteByte(' ')
		case "SG":
			return out.String(), nil
		}
	}
	return out.String(), nil
}

// eeeeToChar is to_char with EEEE: the value alone, in scientific notation
// with d.post digits after the point, a blank for the sign of a positive
// value; an integer and the floats as printf's %+.*e, a bigint and a
// numeric as numeric_out_sci (rounding half away from zero, 9.999 at two
// places is 10.00e+00); NaN and the infinities as '#'s.
func eeeeToChar(d *numDesc, v types.Value) (string, error) {
	hashes := func() string {
		return " " + strings.Repeat("#", d.pre) + "." + strings.Repeat("#", d.post+4)
	}
	if v.T == types.TInt4 || types.IsFloat(v.T) {
		f := types.FloatOf(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return hashes(), nil
		}
		s := fmt.Sprintf("%+.*e", d.post, f)
		if s[0] == '+' {
			s = " " + s[1:]
		}
		return s, nil
	}
	if types.IsNumericSpecial(v) {
		return hashes(), nil
	}
	x, err := types.NumericOf(v)
	if err != nil {
		return "", err
	}
	exp := 0
	if x.Unscaled.Sign() != 0 {
		exp = len(new(big.Int).Abs(x.Unscaled).String()) - 1 - x.Scale
	}
	x.Scale += exp // x / 10^exp
	s := types.RoundDecimal(x, d.post, false).String()
	if s[0] != '-' {
		s = " " + s
	}
	return s + fmt.Sprintf("e%+03d", exp), nil
}

// numDigits is the digit string to_char prints by d (the *_to_char
// functions' preparation): v rounded to d.post places (times 10^multi for
// V), its sign, and the blanks before it; '#'s when it has more integer
// digits than the format.
func numDigits(v types.Value, d *numDesc) (numstr string, sign byte, preSpaces int, err error) {
	var orgnum string
	if types.IsFloat(v.T) {
		f := types.FloatOf(v)
		if d.is(numMulti) {
			f *= math.Pow10(d.multi)
			d.pre += d.multi
		}
		digs := 15 // DBL_DIG
		if v.T == types.TFloat4 {
			digs = 6 // FLT_DIG
		}
		pl := len(strconv.FormatFloat(math.Abs(f), 'f', 0, 64))
		if pl >= digs {
			d.post = 0
		} else if pl+d.post > digs {
			d.post = digs - pl
		}
		orgnum = strconv.FormatFloat(f, 'f', d.post, 64)
	} else if types.IsNumericSpecial(v) {
		// numeric_to_char rounds NaN and the infinities to themselves
		// and walks numeric_out's text of them like digits
		orgnum = v.S
		if d.is(numMulti) {
			d.pre += d.multi
		}
	} else {
		x, err := types.NumericOf(v)
		if err != nil {
			return "", 0, 0, err
		}
		if d.is(numMulti) {
			x, err = types.NumericOf(types.Value{T: types.TNumeric, S: x.String() + "e" + strconv.Itoa(d.multi)})
			if err != nil {
				return "", 0, 0, err
			}
			d.pre += d.multi
		}
		orgnum = types.RoundDecimal(x, d.post, false).String()
	}
	sign = '+'
	if strings.HasPrefix(orgnum, "-") {
		sign, orgnum = '-', orgnum[1:]
	}
	preLen := len(orgnum)
	if i := strings.IndexByte(orgnum, '.'); i >= 0 {
		preLen = i
	}
	switch {
	case preLen < d.pre:
		preSpaces = d.pre - preLen
	case preLen > d.pre:
		orgnum = strings.Repeat("#", d.pre) + "." + strings.Repeat("#", d.post)
	}
	return orgnum, sign, preSpaces, nil
}

// numToChar is NUM_processor's to_char half.
func numToChar(nodes []fmtNode, d *numDesc, number string, sign byte, outPreSpaces int) (string, error) {
	var out strings.Builder
	if d.zeroStart > 0 {
		d.zeroStart--
	}
	signWrote := false
	if d.is(numPlus) || d.is(numMinus) {
		signWrote = !(d.is(numPlus) && !d.is(numMinus))
	} else {
		if sign != '-' && d.is(numFill) {
			d.flag &^= numBracket
		}
		signWrote = sign == '+' && d.is(numFill) && !d.is(numLSign)
		if d.lsign == -1 && d.pre == d.preLsignNum {
			d.lsign = 1
		}
	}
	numCount := d.post + d.pre - 1
	lastRelevant := -1 // an index into number
	if d.is(numFill) && d.is(numDecimal) {
		if p := strings.IndexByte(number, '.'); p >= 0 {
			lastRelevant = p
			for i := p + 1; i < len(number); i++ {
				if number[i] != '0' {
					lastRelevant = i
				}
			}
			if d.zeroEnd > outPreSpaces {
				if lastZero := d.zeroEnd - outPreSpaces; lastRelevant < lastZero {
					lastRelevant = lastZero
				}
			}
		}
	}
	if !signWrote && outPreSpaces == 0 {
		numCount++
	}
	decimal := "."
	numCurr, np := 0, 0 // the digit position, and number's
	at := func(i int) byte {
		if i < len(number) {
			return number[i]
		}
		return 0
	}
	lastRelIs := func(c byte) bool { return lastRelevant >= 0 && at(lastRelevant) == c }
	predecSpace := func() bool {
		return !d.is(numZero) && np == 0 && at(0) == '0' && d.post != 0
	}
	numIn := false
	numpart := func(id string) {
		numIn = false
		if !signWrote &&
			(numCurr >= outPreSpaces || (d.is(numZero) && d.zeroStart == numCurr)) &&
			(!predecSpace() || lastRelIs('.')) {
			switch {
			case d.is(numLSign):
				if d.lsign == -1 {
					out.WriteByte(sign)
					signWrote = true
				}
			case d.is(numBracket):
				if sign == '+' {
					out.WriteByte(' ')
				} else {
					out.WriteByte('<')
				}
				signWrote = true
			case sign == '+':
				if !d.is(numFill) {
					out.WriteByte(' ')
				}
				signWrote = true
			case sign == '-':
				out.WriteByte('-')
				signWrote = true
			}
		}
		switch {
		case numCurr < outPreSpaces && (d.zeroStart > numCurr || !d.is(numZero)):
			if !d.is(numFill) {
				out.WriteByte(' ')
			}
		case d.is(numZero) && numCurr < outPreSpaces && d.zeroStart <= numCurr:
			out.WriteByte('0')
			numIn = true
		default:
			if at(np) == '.' {
				if !lastRelIs('.') || d.is(numFill) {
					out.WriteString(decimal)
				}
			} else {
				switch {
				case lastRelevant >= 0 && np > lastRelevant && id != "0":
				case predecSpace():
					if !d.is(numFill) {
						out.WriteByte(' ')
					} else if lastRelIs('.') {
						out.WriteByte('0')
					}
				default:
					if c := at(np); c != 0 {
						out.WriteByte(c)
					}
					numIn = true
				}
			}
			if np < len(number) {
				np++
			}
		}
		end := numCount
		if outPreSpaces > 0 {
			end++
		}
		if d.is(numDecimal) {
			end++
		}
		if lastRelevant >= 0 && lastRelevant == np {
			end = numCurr
		}
		if numCurr+1 == end {
			if signWrote && d.is(numBracket) {
				if sign == '+' {
					out.WriteByte(' ')
				} else {
					out.WriteByte('>')
				}
			} else if d.is(numLSign) && d.lsign == 1 {
				out.WriteByte(sign)
			}
		}
		numCurr++
	}
	for _, n := range nodes {
		if n.key == nil {
			out.WriteString(n.char)
			continue
		}
		switch n.key.id {
		case "9", "0", ".", "D":
			numpart(n.key.id)
		case ",", "G":
			if !numIn {
				if !d.is(numFill) {
					out.WriteByte(' ')
				}
			} else {
				out.WriteByte(',')
			}
		case "L":
			out.WriteByte(' ')
		case "TH", "th":
			if number[0] == '#' || sign == '-' || d.is(numDecimal) {
				continue
			}
			suf, err := ordinal(number, n.key.id == "TH")
			if err != nil {
				return "", err
			}
			out.WriteString(suf)
		case "MI":
			if sign == '-' {
				out.WriteByte('-')
			} else if !d.is(numFill) {
				out.WriteByte(' ')
			}
		case "PL":
			if sign == '+' {
				out.WriteByte('+')
			} else if !d.is(numFill) {
				out.WriteByte(' ')
			}
		case "SG":
			out.WriteByte(sign)
		}
	}
	return out.String(), nil
}

// ---- the functions ----

// ToChar is to_char(v, format) of a timestamp, timestamptz, interval or
// number v (a date is cast to timestamptz before): NULL for a NULL
// argument, and for an empty format but of a number's.
func ToChar(v, format types.Value) (types.Value, error) {
	if v.Null || format.Null {
		return types.Null(types.TText), nil
	}
	if v.T == types.TInterval {
		if format.S == "" {
			return types.Null(types.TText), nil
		}
		s, err := intervalToChar(parseFormat(format.S, true), types.IntervalOf(v)) // formatting_interval.go
		return types.Text(s), err
	}
	if IsTimestamp(v.T) {
		if format.S == "" {
			return types.Null(types.TText), nil
		}
		tz := ""
		if v.T == types.TTimestamptz {
			tz = "UTC"
		}
		s, err := dchToChar(parseFormat(format.S, true), types.Instant(v), tz)
		if err != nil {
			return types.Value{}, err
		}
		return types.Text(s), nil
	}
	if format.S == "" {
		return types.Text(""), nil
	}
	nodes, d, err := numFormat(format.S)
	if err != nil {
		return types.Value{}, err
	}
	if d.is(numRoman) || d.is(numEEEE) {
		var s string
		if d.is(numRoman) {
			s, err = romanToChar(nodes, d, v)
		} else {
			s, err = eeeeToChar(d, v)
		}
		return types.Text(s), err
	}
	number, sign, pre, err := numDigits(v, d)
	if err != nil {
		return types.Value{}, err
	}
	s, err := numToChar(nodes, d, number, sign, pre)
	if err != nil {
		return types.Value{}, err
	}
	return types.Text(s), nil
}

// ToDate is to_date(s, format) of two texts.
func ToDate(a []types.Value) (types.Value, error) {
	t, err := toTimestamp(a[0].S, a[1].S, true)
	if err != nil {
		return types.Value{}, err
	}
	return types.DateValue(t), nil
}

// ToTimestamp is to_timestamp(s, format) of two texts.
func ToTimestamp(a []types.Value) (types.Value, error) {
	t, err := toTimestamp(a[0].S, a[1].S, false)
	if err != nil {
		return types.Value{}, err
	}
	return TimestampResult(t, types.TTimestamptz)
}

// ---- reading ----

// tmFields is TmFromChar: the fields a format read.
type tmFields struct {
	mode                                 byte
	hh, pm, mi, ss, ssss, d, dd, ddd, mm int
	ms, year, bc, cc, j, us, yysz, ww, w int
	clock12                              bool
	tzsign, tzh, tzm                     int
	set                                  map[string]bool
}

func dtFormatErr(format string, args ...any) error {
	return pgerror.Errorf(pgerror.CodeDatetimeFormat, format, args...)
}

// setInt is from_char_set_int: a field read twice must agree.
func (tm *tmFields) setInt(dest *int, v int, n *fmtNode) error {
	if *dest != 0 && *dest != v {
		return &pgerror.Error{Code: pgerror.CodeDatetimeFormat, Message: fmt.Sprintf("conflicting values for %q field in formatting string", n.key.name),
			Detail: "This value contradicts a previous setting for the same field type."}
	}
	*dest = v
	return nil
}

// isNextSeparator is is_next_separator: whether the node after nodes[i]
// reads no digits, so nodes[i] may read as many as there are.
func isNextSeparator(nodes []fmtNode, i int) bool {
	if nodes[i].key != nil && nodes[i].th {
		return true
	}
	if i+1 >= len(nodes) {
		return true
	}
	n := nodes[i+1]
	if n.key != nil {
		return !n.key.isDigit
	}
	return !(len(n.char) == 1 && n.char[0] >= '0' && n.char[0] <= '9')
}

// parseIntLen is from_char_parse_int_len.
func (tm *tmFields) parseIntLen(dest *int, s string, length int, nodes []fmtNode, i int) (string, int, error) {
	n := &nodes[i]
	init := s
	s = strings.TrimLeft(s, " \t\n\r\v\f")
	var result int64
	var used int
	copyLen := min(length, len(s))
	cp := s[:copyLen]
	if n.fm || isNextSeparator(nodes, i) {
		k := 0
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k > 0 && !(k == 1 && (s[0] == '+' || s[0] == '-')) {
			var err error
			result, err = strconv.ParseInt(s[:k], 10, 64)
			if err != nil || result < math.MinInt32 || result > math.MaxInt32 {
				return "", 0, &pgerror.Error{Code: pgerror.CodeDatetimeRange, Message: fmt.Sprintf("value for %q in source string is out of range", n.key.name),
					Detail: "Value must be in the range -2147483648 to 2147483647."}
			}
			s = s[k:]
		} else {
			s = init
		}
	} else {
		if copyLen < length {
			return "", 0, &pgerror.Error{Code: pgerror.CodeDatetimeFormat, Message: fmt.Sprintf("source string too short for %q formatting field", n.key.name),
				Detail: fmt.Sprintf("Field requires %d characters, but only %d remain.", length, copyLen),
				Hint:   "If your source string is not fixed-width, try using the \"FM\" modifier."}
		}
		k := 0
		for k < len(cp) && (cp[k] == ' ' || cp[k] >= '\t' && cp[k] <= '\r') {
			k++
		}
		st := k
		if k < len(cp) && (cp[k] == '+' || cp[k] == '-') {
			k++
		}
		ds := k
		for k < len(cp) && cp[k] >= '0' && cp[k] <= '9' {
			k++
		}
		if k == ds {
			k = 0
		} else {
			result, _ = strconv.ParseInt(cp[st:k], 10, 64)
		}
		used = k
		if used > 0 && used < length {
			return "", 0, &pgerror.Error{Code: pgerror.CodeDatetimeFormat, Message: fmt.Sprintf("invalid value %q for %q", cp, n.key.name),
				Detail: fmt.Sprintf("Field requires %d characters, but only %d could be parsed.", length, used),
				Hint:   "If your source string is not fixed-width, try using the \"FM\" modifier."}
		}
		s = s[used:]
	}
	if len(s) == len(init) {
		return "", 0, &pgerror.Error{Code: pgerror.CodeDatetimeFormat, Message: fmt.Sprintf("invalid value %q for %q", cp, n.key.name), Detail: "Value must be an integer."}
	}
	if dest != nil {
		if err := tm.setInt(dest, int(result), n); err != nil {
			return "", 0, err
		}
	}
	return s, len(init) - len(s), nil
}

// seqSearch is from_char_seq_search over names (matched case-blind as a
// prefix of s, the first that matches).
func seqSearch(s string, names []string, n *fmtNode) (int, string, error) {
	for i, name := range names {
		if len(s) >= len(name) && strings.EqualFold(s[:len(name)], name) {
			return i, s[len(name):], nil
		}
	}
	word := s
	if k := strings.IndexAny(word, " \t\n\r\v\f"); k >= 0 {
		word = word[:k]
	}
	return 0, "", &pgerror.Error{Code: pgerror.CodeDatetimeFormat, Message: fmt.Sprintf("invalid value %q for %q", word, n.key.name),
		Detail: "The given value did not match any of the allowed values for this field."}
}

// adjustPartialYear is adjust_partial_year_to_2020.
func adjustPartialYear(y int) int {
	switch {
	case y < 70:
		return y + 2000
	case y < 100:
		return y + 1900
	case y < 520:
		return y + 2000
	case y < 1000:
		return y + 1000
	}
	return y
}

// dchFromChar is DCH_from_char: the fields of s read by the format.
func dchFromChar(nodes []fmtNode, s string) (*tmFields, error) {
	tm := &tmFields{}
	full := s
	fx := false
	extraSkip := 0
	var err error
	for i := 0; i < len(nodes) && s != ""; i++ {
		n := &nodes[i]
		if !fx && (n.key == nil || n.key.id != "FX") && (n.key != nil || i == 0) {
			for s != "" && isSpace(s[0]) {
				s = s[1:]
				extraSkip++
			}
		}
		if n.key == nil {
			if n.space || n.sep {
				if !fx {
					extraSkip--
					if s != "" && (isSpace(s[0]) || isSeparatorChar(s[0])) {
						s = s[1:]
						extraSkip++
					}
				} else {
					s = s[charLen(s):]
				}
			} else if !fx && extraSkip > 0 {
				extraSkip--
			} else {
				s = s[charLen(s):]
			}
			continue
		}
		if n.key.mode != 0 {
			if tm.mode == 0 {
				tm.mode = n.key.mode
			} else if tm.mode != n.key.mode {
				return nil, &pgerror.Error{Code: pgerror.CodeDatetimeFormat, Message: "invalid combination of date conventions",
					Hint: "Do not mix Gregorian and ISO week date conventions in a formatting template."}
			}
		}
		var v int
		switch id := n.key.id; id {
		case "FX":
			fx = true
		case "A.M.", "P.M.", "a.m.", "p.m.":
			if v, s, err = seqSearch(s, []string{"a.m.", "p.m.", "A.M.", "P.M."}, n); err == nil {
				err = tm.setInt(&tm.pm, v%2, n)
				tm.clock12 = true
			}
		case "AM", "PM", "am", "pm":
			if v, s, err = seqSearch(s, []string{"am", "pm", "AM", "PM"}, n); err == nil {
				err = tm.setInt(&tm.pm, v%2, n)
				tm.clock12 = true
			}
		case "HH", "HH12":
			s, _, err = tm.parseIntLen(&tm.hh, s, 2, nodes, i)
			tm.clock12 = true
		case "HH24":
			s, _, err = tm.parseIntLen(&tm.hh, s, 2, nodes, i)
		case "MI":
			s, _, err = tm.parseIntLen(&tm.mi, s, 2, nodes, i)
		case "SS":
			s, _, err = tm.parseIntLen(&tm.ss, s, 2, nodes, i)
		case "MS":
			var l int
			if s, l, err = tm.parseIntLen(&tm.ms, s, 3, nodes, i); err == nil && l < 3 {
				tm.ms *= int(math.Pow10(3 - l)) // 25 is 0.25 s, 025 is 0.025 s
			}
		case "FF1", "FF2", "FF3", "FF4", "FF5", "FF6", "US":
			width := 6
			if id != "US" {
				width = int(id[2] - '0')
			}
			var l int
			if s, l, err = tm.parseIntLen(&tm.us, s, width, nodes, i); err == nil && l < 6 {
				tm.us *= int(math.Pow10(6 - min(l, 6)))
			}
		case "SSSS":
			s, _, err = tm.parseIntLen(&tm.ssss, s, len(n.key.name), nodes, i)
		case "tz", "TZ", "OF":
			return nil, pgerror.NotSupported("formatting field %q is only supported in to_char", n.key.name)
		case "TZH":
			switch {
			case s != "" && (s[0] == '+' || s[0] == '-' || s[0] == ' '):
				tm.tzsign = 1
				if s[0] == '-' {
					tm.tzsign = -1
				}
				s = s[1:]
			case extraSkip > 0 && len(full)-len(s) > 0 && full[len(full)-len(s)-1] == '-':
				tm.tzsign = -1 // a minus taken as a separator is the offset's
			default:
				tm.tzsign = 1
			}
			s, _, err = tm.parseIntLen(&tm.tzh, s, 2, nodes, i)
		case "TZM":
			if tm.tzsign == 0 {
				tm.tzsign = 1
			}
			s, _, err = tm.parseIntLen(&tm.tzm, s, 2, nodes, i)
		case "A.D.", "B.C.", "a.d.", "b.c.":
			if v, s, err = seqSearch(s, []string{"a.d.", "b.c.", "A.D.", "B.C."}, n); err == nil {
				err = tm.setInt(&tm.bc, v%2, n)
			}
		case "AD", "BC", "ad", "bc":
			if v, s, err = seqSearch(s, []string{"ad", "bc", "AD", "BC"}, n); err == nil {
				err = tm.setInt(&tm.bc, v%2, n)
			}
		case "MONTH", "Month", "month":
			if v, s, err = seqSearch(s, monthsFull, n); err == nil {
				err = tm.setInt(&tm.mm, v+1, n)
			}
		case "MON", "Mon", "mon":
			abbr := make([]string, 12)
			for k, m := range monthsFull {
				abbr[k] = m[:3]
			}
			if v, s, err = seqSearch(s, abbr, n); err == nil {
				err = tm.setInt(&tm.mm, v+1, n)
			}
		case "MM":
			s, _, err = tm.parseIntLen(&tm.mm, s, 2, nodes, i)
		case "DAY", "Day", "day":
			if v, s, err = seqSearch(s, daysFull, n); err == nil {
				err = tm.setInt(&tm.d, v+1, n)
			}
		case "DY", "Dy", "dy":
			abbr := make([]string, 7)
			for k, d := range daysFull {
				abbr[k] = d[:3]
			}
			if v, s, err = seqSearch(s, abbr, n); err == nil {
				err = tm.setInt(&tm.d, v+1, n)
			}
		case "DDD", "IDDD":
			s, _, err = tm.parseIntLen(&tm.ddd, s, 3, nodes, i)
		case "DD":
			s, _, err = tm.parseIntLen(&tm.dd, s, 2, nodes, i)
		case "D":
			s, _, err = tm.parseIntLen(&tm.d, s, 1, nodes, i)
		case "ID":
			if s, _, err = tm.parseIntLen(&tm.d, s, 1, nodes, i); err == nil {
				if tm.d++; tm.d > 7 {
					tm.d = 1
				}
			}
		case "WW", "IW":
			s, _, err = tm.parseIntLen(&tm.ww, s, 2, nodes, i)
		case "Q":
			s, _, err = tm.parseIntLen(nil, s, 1, nodes, i)
		case "CC":
			s, _, err = tm.parseIntLen(&tm.cc, s, 2, nodes, i)
		case "Y,YYY":
			k := strings.IndexByte(s, ',')
			mil, e1 := strconv.Atoi(strings.TrimLeft(s[:max(k, 0)], " "))
			j := k + 1
			for j < len(s) && j < k+4 && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			yrs, e2 := strconv.Atoi(s[min(k+1, len(s)):max(j, k+1)])
			if k < 0 || e1 != nil || e2 != nil {
				return nil, dtFormatErr(`invalid input string for "Y,YYY"`)
			}
			if err = tm.setInt(&tm.year, yrs+mil*1000, n); err == nil {
				tm.yysz, s = 4, s[j:]
			}
		case "YYYY", "IYYY":
			s, _, err = tm.parseIntLen(&tm.year, s, 4, nodes, i)
			tm.yysz = 4
		case "YYY", "IYY", "YY", "IY", "Y", "I":
			var l int
			if s, l, err = tm.parseIntLen(&tm.year, s, len(n.key.name), nodes, i); err == nil && l < 4 {
				tm.year = adjustPartialYear(tm.year)
			}
			tm.yysz = len(n.key.name)
		case "RM", "rm":
			rev := make([]string, 12)
			for k := range rev {
				rev[k] = romanMonth[11-k]
			}
			if v, s, err = seqSearch(s, rev, n); err == nil {
				err = tm.setInt(&tm.mm, 12-v, n)
			}
		case "W":
			s, _, err = tm.parseIntLen(&tm.w, s, 1, nodes, i)
		case "J":
			s, _, err = tm.parseIntLen(&tm.j, s, 1, nodes, i)
		}
		if err != nil {
			return nil, err
		}
		if n.th {
			for k := 0; k < 2 && s != ""; k++ {
				s = s[charLen(s):]
			}
		}
		if !fx {
			extraSkip = 0
			for s != "" && isSpace(s[0]) {
				s = s[1:]
				extraSkip++
			}
		}
	}
	return tm, nil
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// toTimestamp is do_to_timestamp: the instant (in UTC, this layer's
// TimeZone) that s read by format names. dateOnly: to_date's checks.
func toTimestamp(s, format string, dateOnly bool) (time.Time, error) {
	tm, err := dchFromChar(parseFormat(format, true), s)
	if err != nil {
		return time.Time{}, err
	}
	year, mon, mday := 0, 1, 1
	hour, minute, sec := 0, 0, 0
	if tm.ssss != 0 {
		x := tm.ssss
		hour, x = x/3600, x%3600
		minute, sec = x/60, x%60
	}
	if tm.ss != 0 {
		sec = tm.ss
	}
	if tm.mi != 0 {
		minute = tm.mi
	}
	if tm.hh != 0 {
		hour = tm.hh
	}
	if tm.clock12 {
		if hour < 1 || hour > 12 {
			return time.Time{}, &pgerror.Error{Code: pgerror.CodeDatetimeFormat, Message: fmt.Sprintf("hour \"%d\" is invalid for the 12-hour clock", hour),
				Hint: "Use the 24-hour clock, or give an hour between 1 and 12."}
		}
		if tm.pm != 0 && hour < 12 {
			hour += 12
		} else if tm.pm == 0 && hour == 12 {
			hour = 0
		}
	}
	var setYear, setMon, setDay bool
	if tm.year != 0 {
		if tm.cc != 0 && tm.yysz <= 2 {
			if tm.bc != 0 {
				tm.cc = -tm.cc
			}
			year = tm.year % 100
			if year != 0 {
				if tm.cc >= 0 {
					year += (tm.cc - 1) * 100
				} else {
					year = (tm.cc+1)*100 - year + 1
				}
			} else if tm.cc >= 0 {
				year = tm.cc * 100
			} else {
				year = tm.cc*100 + 1
			}
		} else {
			year = tm.year
			if tm.bc != 0 {
				year = -year
			}
			if year < 0 {
				year++
			}
		}
		setYear = true
	} else if tm.cc != 0 {
		if tm.bc != 0 {
			tm.cc = -tm.cc
		}
		if tm.cc >= 0 {
			year = (tm.cc-1)*100 + 1
		} else {
			year = tm.cc*100 + 1
		}
		setYear = true
	}
	if tm.j != 0 {
		year, mon, mday = fromJulian(tm.j)
		setYear, setMon, setDay = true, true, true
	}
	if tm.ww != 0 {
		if tm.mode == 'I' {
			jd := isoWeek1(year) + (tm.ww-1)*7
			if tm.d != 0 {
				if tm.d > 1 {
					jd += tm.d - 2
				} else {
					jd += 6
				}
			}
			year, mon, mday = fromJulian(jd)
			setYear, setMon, setDay = true, true, true
		} else {
			tm.ddd = (tm.ww-1)*7 + 1
		}
	}
	if tm.w != 0 {
		tm.dd = (tm.w-1)*7 + 1
	}
	if tm.dd != 0 {
		mday, setDay = tm.dd, true
	}
	if tm.mm != 0 {
		mon, setMon = tm.mm, true
	}
	if tm.ddd != 0 && (mon <= 1 || mday <= 1) {
		if year == 0 && tm.bc == 0 {
			return time.Time{}, dtFormatErr("cannot calculate day of year without year information")
		}
		if tm.mode == 'I' {
			jd := isoWeek1(year) + tm.ddd - 1
			year, mon, mday = fromJulian(jd)
		} else {
			ysum := []int{0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365}
			if isLeap(year) {
				ysum = []int{0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335, 366}
			}
			k := 1
			for ; k <= 12; k++ {
				if tm.ddd <= ysum[k] {
					break
				}
			}
			if mon <= 1 {
				mon = k
			}
			if mday <= 1 && k <= 12 {
				mday = tm.ddd - ysum[k-1]
			}
		}
		setMon, setDay = true, true
	}
	usec := tm.ms*1000 + tm.us
	outOfRange := func() error {
		return pgerror.Errorf(pgerror.CodeDatetimeRange, "date/time field value out of range: %q", s)
	}
	if setYear || setMon || setDay {
		if setMon && (mon < 1 || mon > 12) || setDay && (mday < 1 || mday > 31) {
			return time.Time{}, outOfRange()
		}
		if setYear && setMon && setDay && mday > daysInMonth(year, mon) {
			return time.Time{}, outOfRange()
		}
	}
	if hour < 0 || hour >= 24 || minute < 0 || minute >= 60 || sec < 0 || sec >= 60 || usec < 0 || usec >= 1000000 {
		return time.Time{}, outOfRange()
	}
	t := time.Date(year, time.Month(mon), mday, hour, minute, sec, usec*1000, time.UTC)
	if tm.tzsign != 0 && (tm.tzh < 0 || tm.tzh > 15 || tm.tzm < 0 || tm.tzm >= 60) {
		return time.Time{}, pgerror.Errorf("22009", "time zone displacement out of range: %q", s)
	}
	if tm.tzsign != 0 && !dateOnly {
		t = t.Add(-time.Duration(tm.tzsign*(tm.tzh*3600+tm.tzm*60)) * time.Second)
	}
	if dateOnly {
		t = time.Date(year, time.Month(mon), mday, 0, 0, 0, 0, time.UTC)
	}
	if t.Before(types.MinDateTime) {
		if dateOnly {
			return time.Time{}, pgerror.Errorf(pgerror.CodeDatetimeRange, "date out of range: %q", s)
		}
		return time.Time{}, pgerror.Errorf(pgerror.CodeDatetimeRange, "timestamp out of range")
	}
	if dateOnly && t.Year() > 5874897 {
		return time.Time{}, pgerror.Errorf(pgerror.CodeDatetimeRange, "date out of range: %q", s)
	}
	return t, nil
}

func daysInMonth(y, m int) int {
	return time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// isSpace is C's isspace, as formatting.c's scanning uses it.
func isSpace(c byte) bool { return strings.IndexByte(" \t\n\r\f\v", c) >= 0 }
