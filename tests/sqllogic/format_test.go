package sqllogic

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
)

// A record is one directive of a .test file with its SQL and expectation.
type record struct {
	line    int    // the directive's line (1-based)
	query   bool   // query (else statement)
	rowsort bool   // query rowsort: compare the rows sorted
	wantErr string // the SQLSTATE expected, "" for ok / rows
	sql     string
	want    []string // query: the expected rows, one line each
}

// A chunk of a file is either raw lines kept as they are (comments and
// blank lines) or a record.
type chunk struct {
	raw []string
	rec *record
}

type testFile struct {
	path   string
	chunks []chunk
}

func (f *testFile) records() []*record {
	var rs []*record
	for _, c := range f.chunks {
		if c.rec != nil {
			rs = append(rs, c.rec)
		}
	}
	return rs
}

func isRaw(line string) bool {
	t := strings.TrimSpace(line)
	return t == "" || strings.HasPrefix(t, "#")
}

// parseFile reads a .test file (format: testdata/sql/README.md).
func parseFile(path string) (*testFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(b) == 0 {
		lines = nil
	}
	f := &testFile{path: path}
	for i := 0; i < len(lines); {
		if isRaw(lines[i]) {
			j := i
			for j < len(lines) && isRaw(lines[j]) {
				j++
			}
			f.chunks = append(f.chunks, chunk{raw: lines[i:j]})
			i = j
			continue
		}
		r := &record{line: i + 1}
		fields := strings.Fields(lines[i])
		switch {
		case len(fields) == 2 && fields[0] == "statement" && fields[1] == "ok":
		case len(fields) == 3 && fields[0] == "statement" && fields[1] == "error":
			r.wantErr = fields[2]
		case len(fields) == 1 && fields[0] == "query":
			r.query = true
		case len(fields) == 2 && fields[0] == "query" && fields[1] == "rowsort":
			r.query, r.rowsort = true, true
		case len(fields) == 3 && fields[0] == "query" && fields[1] == "error":
			r.query, r.wantErr = true, fields[2]
		default:
			return nil, fmt.Errorf("%s:%d: unknown directive %q (want statement ok, statement error SQLSTATE, query, query rowsort, query error SQLSTATE)", path, i+1, lines[i])
		}
		if r.wantErr != "" && !validSQLSTATE(r.wantErr) {
			return nil, fmt.Errorf("%s:%d: %q is not a SQLSTATE (five digits or capital letters)", path, i+1, r.wantErr)
		}
		i++
		var sql []string
		for i < len(lines) && strings.TrimSpace(lines[i]) != "" && lines[i] != "----" {
			sql = append(sql, lines[i])
			i++
		}
		if len(sql) == 0 {
			return nil, fmt.Errorf("%s:%d: directive without SQL", path, r.line)
		}
		r.sql = strings.Join(sql, "\n")
		if i < len(lines) && lines[i] == "----" {
			if !r.query || r.wantErr != "" {
				return nil, fmt.Errorf("%s:%d: ---- after a directive that expects no rows", path, i+1)
			}
			i++
			for i < len(lines) && strings.TrimSpace(lines[i]) != "" {
				r.want = append(r.want, lines[i])
				i++
			}
		} else if r.query && r.wantErr == "" {
			return nil, fmt.Errorf("%s:%d: query without ---- and its rows (write ---- and no rows for an empty result)", path, r.line)
		}
		f.chunks = append(f.chunks, chunk{rec: r})
	}
	return f, nil
}

func validSQLSTATE(s string) bool {
	if len(s) != 5 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// outcome is what a server answered to a record's SQL.
type outcome struct {
	code string   // SQLSTATE of the error, "" for success
	msg  string   // the error's message
	rows []string // the rows of the last result, formatted
}

// formatValue is a value as a .test file writes it.
func formatValue(v []byte) string {
	switch {
	case v == nil:
		return "NULL"
	case len(v) == 0:
		return "(empty)"
	}
	s := string(v)
	s = strings.ReplaceAll(s, "\t", `\t`)
	return strings.ReplaceAll(s, "\n", `\n`)
}

// render is the record with the expectation of o (for -rewrite): the
// directive's form and the SQL are kept, the expected part is o's.
func (r *record) render(o outcome) []string {
	var out []string
	switch {
	case !r.query && o.code == "":
		out = append(out, "statement ok")
	case !r.query:
		out = append(out, "statement error "+o.code)
	case o.code != "":
		out = append(out, "query error "+o.code)
	case r.rowsort:
		out = append(out, "query rowsort")
	default:
		out = append(out, "query")
	}
	out = append(out, strings.Split(r.sql, "\n")...)
	if r.query && o.code == "" {
		out = append(out, "----")
		rows := slices.Clone(o.rows)
		if r.rowsort {
			slices.Sort(rows)
		}
		out = append(out, rows...)
	}
	return out
}

// check compares o with the record's expectation; "" when it matches.
func (r *record) check(o outcome) string {
	got := func() string {
		if o.code != "" {
			return fmt.Sprintf("error %s: %s", o.code, o.msg)
		}
		if !r.query {
			return "ok"
		}
		return strings.Join(sortedIf(r.rowsort, o.rows), "\n") + fmt.Sprintf("\n(%d rows)", len(o.rows))
	}
	switch {
	case r.wantErr != "":
		if o.code == r.wantErr {
			return ""
		}
		return fmt.Sprintf("expected: error %s\ngot: %s", r.wantErr, got())
	case o.code != "" || !r.query:
		if o.code == "" {
			return ""
		}
		if !r.query {
			return "expected: ok\ngot: " + got()
		}
	default:
		if slices.Equal(sortedIf(r.rowsort, r.want), sortedIf(r.rowsort, o.rows)) {
			return ""
		}
	}
	return fmt.Sprintf("expected:\n%s\n(%d rows)\ngot:\n%s", strings.Join(sortedIf(r.rowsort, r.want), "\n"), len(r.want), got())
}

func sortedIf(sort bool, rows []string) []string {
	if !sort {
		return rows
	}
	s := slices.Clone(rows)
	slices.Sort(s)
	return s
}

// write writes the file back with the records rendered from outs (one per
// record, in order).
func (f *testFile) write(outs []outcome) error {
	return os.WriteFile(f.path, f.render(outs), 0o644)
}

// render is the file's text with the records rendered from outs.
func (f *testFile) render(outs []outcome) []byte {
	var b strings.Builder
	i := 0
	for _, c := range f.chunks {
		lines := c.raw
		if c.rec != nil {
			lines = c.rec.render(outs[i])
			i++
		}
		for _, l := range lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return []byte(b.String())
}

// readPending reads pending.txt: "file.test reason..." per line, # comments.
func readPending(path string) (map[string]string, error) {
	fh, err := os.Open(path)
	if os.IsNotExist(err) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(fh)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, _ := strings.Cut(line, " ")
		reason = strings.TrimSpace(reason)
		if !strings.HasSuffix(name, ".test") || reason == "" {
			return nil, fmt.Errorf("%s:%d: want \"name.test reason\", got %q", path, n, line)
		}
		if _, dup := m[name]; dup {
			return nil, fmt.Errorf("%s:%d: %s listed twice", path, n, name)
		}
		m[name] = reason
	}
	return m, sc.Err()
}
