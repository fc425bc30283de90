package sqlfe

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// COPY ... FROM STDIN and COPY ... TO STDOUT, as PostgreSQL 15 runs them.
//
// The data travels through the connection's COPY sub-protocol (CopyIO,
// pgwire/copy.go). COPY FROM STDIN runs in the session's transaction like
// an INSERT (outside BEGIN: one implicit transaction, all or nothing) and
// inserts each row as soon as its line is complete: the data is never held
// whole, only the line being read. Each row goes through INSERT's own path
// (insertRow: defaults of the columns left out, the hidden rowid, the
// columns' modifiers, NOT NULL, unique keys and indexes, foreign keys).
// An error names the line (the CONTEXT "COPY t, line 3, column b: "x"")
// and, as any statement's, rolls the transaction back.
//
// COPY t TO STDOUT is COPY (SELECT cols FROM t) TO STDOUT; the query's rows
// are computed as a SELECT's are (in memory), then sent one CopyData each.
//
// Formats: text (tab-delimited, \N for NULL, backslash escapes), csv
// (quote and escape characters, quoted fields may hold delimiters and
// newlines) and binary (PGCOPY signature, each field's binary form).
// Options: FORMAT, DELIMITER, NULL, HEADER [MATCH], QUOTE, ESCAPE,
// ENCODING 'UTF8', FREEZE (accepted, meaningless here); FORCE_QUOTE,
// FORCE_NOT_NULL, FORCE_NULL and WHERE are refused with 0A000. COPY to or
// from a file or program on the server is refused (0A000): psql's \copy
// reads and writes the client's files through STDIN / STDOUT.

// CopyIO is the client's side of the COPY sub-protocol, provided by the
// connection (pgwire). Its methods are called by the session's goroutine
// while a COPY statement runs.
type CopyIO interface {
	// CopyInStart sends CopyInResponse (binary: the overall format and
	// every column's is binary, else text) for ncols columns, and flushes.
	CopyInStart(binary bool, ncols int) error
	// CopyInData returns the data of the next CopyData message, valid
	// until the next call; io.EOF at CopyDone; an error for CopyFail
	// (57014), another message (08P01) or a connection gone.
	CopyInData(ctx context.Context) ([]byte, error)
	// CopyOutStart sends CopyOutResponse.
	CopyOutStart(binary bool, ncols int) error
	// CopyOutData sends one CopyData message (b may be reused after).
	CopyOutData(b []byte) error
	// CopyOutDone sends CopyDone.
	CopyOutDone() error
}

// SetCopyIO gives the session its connection's COPY sub-protocol.
func (s *Session) SetCopyIO(c CopyIO) { s.copyIO = c }

type copyFormat uint8

const (
	copyText copyFormat = iota
	copyCSV
	copyBinary
)

// copyOpts are a COPY statement's options, checked as PostgreSQL's
// ProcessCopyOptions does.
type copyOpts struct {
	format      copyFormat
	delim       byte
	null        string
	header      bool
	headerMatch bool
	quote       byte
	escape      byte
}

func defBool(d *pg.DefElem) (bool, bool) {
	if d.Arg == nil {
		return true, true
	}
	if b := d.Arg.GetBoolean(); b != nil {
		return b.Boolval, true
	}
	if i := d.Arg.GetInteger(); i != nil {
		switch i.Ival {
		case 0:
			return false, true
		case 1:
			return true, true
		}
		return false, false
	}
	if s := d.Arg.GetString_(); s != nil {
		return types.ParseBool(s.Sval)
	}
	return false, false
}

func defString(d *pg.DefElem) (string, bool) {
	if d.Arg == nil {
		return "", false
	}
	if s := d.Arg.GetString_(); s != nil {
		return s.Sval, true
	}
	return "", false
}

func parseCopyOpts(list []*pg.Node, from bool) (*copyOpts, error) {
	o := &copyOpts{}
	seen := map[string]bool{}
	var delim, null, quote, escape *string
	formatSet := false
	for _, n := range list {
		d := n.GetDefElem()
		if d == nil {
			return nil, pgerror.NotSupported("this COPY option is not supported")
		}
		name := d.Defname
		if seen[name] {
			return nil, pgerror.Errorf(pgerror.CodeSyntax, "conflicting or redundant options").At(d.Location)
		}
		seen[name] = true
		str := func() (*string, error) {
			v, ok := defString(d)
			if !ok {
				return nil, pgerror.Errorf(pgerror.CodeSyntax, "%s requires a parameter", name).At(d.Location)
			}
			return &v, nil
		}
		var err error
		switch name {
		case "format":
			v, ok := defString(d)
			if !ok {
				return nil, pgerror.Errorf(pgerror.CodeSyntax, "%s requires a parameter", name).At(d.Location)
			}
			switch v {
			case "text":
				o.format = copyText
			case "csv":
				o.format = copyCSV
			case "binary":
				o.format = copyBinary
			default:
				return nil, pgerror.Errorf(pgerror.CodeInvalidParamValue, "COPY format %q not recognized", v).At(d.Location)
			}
			formatSet = true
		case "freeze":
			if _, ok := defBool(d); !ok {
				return nil, pgerror.Errorf(pgerror.CodeSyntax, "%s requires a Boolean value", name).At(d.Location)
			}
		case "delimiter":
			delim, err = str()
		case "null":
			null, err = str()
		case "quote":
			quote, err = str()
		case "escape":
			escape, err = str()
		case "header":
			if v, ok := defString(d); ok && strings.EqualFold(v, "match") {
				if !from {
					return nil, pgerror.NotSupported("cannot use \"%s\" with HEADER in COPY TO", v).At(d.Location)
				}
				o.header, o.headerMatch = true, true
				break
			}
			b, ok := defBool(d)
			if !ok {
				return nil, pgerror.Errorf(pgerror.CodeSyntax, "%s requires a Boolean value or \"match\"", name).At(d.Location)
			}
			o.header = b
		case "encoding":
			v, ok := defString(d)
			if !ok {
				return nil, pgerror.Errorf(pgerror.CodeSyntax, "%s requires a parameter", name).At(d.Location)
			}
			if e := strings.ToUpper(strings.ReplaceAll(v, "-", "")); e != "UTF8" && e != "UNICODE" {
				return nil, pgerror.NotSupported("COPY ENCODING %q is not supported (only UTF8)", v).At(d.Location)
			}
		case "force_quote", "force_not_null", "force_null":
			return nil, pgerror.NotSupported("COPY %s is not supported", strings.ToUpper(name)).At(d.Location)
		default:
			return nil, pgerror.Errorf(pgerror.CodeSyntax, "option %q not recognized", name).At(d.Location)
		}
		if err != nil {
			return nil, err
		}
	}
	_ = formatSet
	if o.format == copyBinary {
		if delim != nil {
			return nil, pgerror.Errorf(pgerror.CodeSyntax, "cannot specify DELIMITER in BINARY mode")
		}
		if null != nil {
			return nil, pgerror.Errorf(pgerror.CodeSyntax, "cannot specify NULL in BINARY mode")
		}
		if o.header {
			return nil, pgerror.NotSupported("cannot specify HEADER in BINARY mode")
		}
	}
	csv := o.format == copyCSV
	o.delim, o.null = '\t', `\N`
	if csv {
		o.delim, o.null, o.quote = ',', "", '"'
	}
	if delim != nil {
		if len(*delim) != 1 {
			return nil, pgerror.NotSupported("COPY delimiter must be a single one-byte character")
		}
		o.delim = (*delim)[0]
	}
	if null != nil {
		o.null = *null
	}
	if o.format == copyBinary {
		return o, nil
	}
	if o.delim == '\r' || o.delim == '\n' {
		return nil, pgerror.Errorf(pgerror.CodeInvalidParamValue, "COPY delimiter cannot be newline or carriage return")
	}
	if strings.ContainsAny(o.null, "\r\n") {
		return nil, pgerror.Errorf(pgerror.CodeInvalidParamValue, "COPY null representation cannot use newline or carriage return")
	}
	if !csv && strings.IndexByte("\\.abcdefghijklmnopqrstuvwxyz0123456789", o.delim) >= 0 {
		return nil, pgerror.Errorf(pgerror.CodeInvalidParamValue, "COPY delimiter cannot be \"%s\"", string(o.delim))
	}
	if !csv && quote != nil {
		return nil, pgerror.NotSupported("COPY quote available only in CSV mode")
	}
	if quote != nil {
		if len(*quote) != 1 {
			return nil, pgerror.NotSupported("COPY quote must be a single one-byte character")
		}
		o.quote = (*quote)[0]
	}
	if csv && o.delim == o.quote {
		return nil, pgerror.Errorf(pgerror.CodeInvalidParamValue, "COPY delimiter and quote must be different")
	}
	if !csv && escape != nil {
		return nil, pgerror.NotSupported("COPY escape available only in CSV mode")
	}
	o.escape = o.quote
	if escape != nil {
		if len(*escape) != 1 {
			return nil, pgerror.NotSupported("COPY escape must be a single one-byte character")
		}
		o.escape = (*escape)[0]
	}
	if strings.IndexByte(o.null, o.delim) >= 0 {
		return nil, pgerror.NotSupported("COPY delimiter must not appear in the NULL specification")
	}
	if csv && strings.IndexByte(o.null, o.quote) >= 0 {
		return nil, pgerror.Errorf(pgerror.CodeInvalidParamValue, "CSV quote character must not appear in the NULL specification")
	}
	return o, nil
}

// planCopy plans COPY t [(cols)] FROM STDIN, COPY t [(cols)] TO STDOUT and
// COPY (query) TO STDOUT.
func (s *Session) planCopy(st *pg.CopyStmt, params *[]types.Type) (*plan, error) {
	if st.Filename != "" || st.IsProgram {
		what := "a file"
		if st.IsProgram {
			what = "a program"
		}
		dir := "to"
		if st.IsFrom {
			dir = "from"
		}
		return nil, &pgerror.Error{Code: pgerror.CodeFeatureNotSupp, Message: fmt.Sprintf("COPY %s %s on the server is not supported", dir, what),
			Hint: "COPY FROM STDIN and COPY TO STDOUT work; psql's \\copy reads and writes files on the client through them."}
	}
	if st.WhereClause != nil {
		return nil, pgerror.NotSupported("COPY FROM ... WHERE is not supported")
	}
	o, err := parseCopyOpts(st.Options, st.IsFrom)
	if err != nil {
		return nil, err
	}
	var cols []string
	for _, n := range st.Attlist {
		cols = append(cols, n.GetString_().GetSval())
	}
	if st.IsFrom {
		return s.planCopyFrom(st, o, cols)
	}
	return s.planCopyTo(st, o, cols, params)
}

// copyTarget resolves the table of COPY t [(cols)] and its column list
// (every visible column if none is given).
func (s *Session) copyTarget(rv *pg.RangeVar, names []string) (*catalog.Table, []int, error) {
	t, err := s.table(rv)
	if err != nil {
		return nil, nil, err
	}
	var target []int
	if len(names) == 0 {
		for i, c := range t.Cols {
			if !c.Hidden {
				target = append(target, i)
			}
		}
		return t, target, nil
	}
	seen := map[int]bool{}
	for _, n := range names {
		i := t.Col(n)
		if i < 0 {
			return nil, nil, pgerror.Errorf(pgerror.CodeUndefinedColumn, "column %q of relation %q does not exist", n, t.Name)
		}
		if seen[i] {
			return nil, nil, pgerror.Errorf(pgerror.CodeDuplicateColumn, "column %q specified more than once", n)
		}
		seen[i] = true
		target = append(target, i)
	}
	return t, target, nil
}

// ---- COPY FROM STDIN ----

func (s *Session) planCopyFrom(st *pg.CopyStmt, o *copyOpts, names []string) (*plan, error) {
	t, target, err := s.copyTarget(st.Relation, names)
	if err != nil {
		return nil, err
	}
	// the defaults of the columns the data does not give
	given := make([]bool, len(t.Cols))
	for _, i := range target {
		given[i] = true
	}
	defs := make([]expr, len(t.Cols))
	for i, c := range t.Cols {
		if given[i] || c.Hidden {
			continue
		}
		if defs[i], err = defaultExpr(t, c); err != nil {
			return nil, err
		}
	}
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		if s.copyIO == nil {
			return nil, pgerror.NotSupported("COPY FROM STDIN needs a client connection")
		}
		tx, err := s.ensureTx(ctx)
		if err != nil {
			return nil, err
		}
		cf := &copyFrom{s: s, t: t, o: o, target: target, defs: defs, io: s.copyIO, ctx: ctx}
		cf.bulk = s.ownsEngineTable(t.Engine) // bulk.go
		cf.env = &env{ctx: ctx, s: s}
		if err := s.copyIO.CopyInStart(o.format == copyBinary, len(target)); err != nil {
			return nil, err
		}
		b := &cf.batch
		n, err := cf.run(func(row []types.Value) error {
			// as PostgreSQL's COPY: NOT NULL (and the other checks of the
			// row) while the line is at hand, the insert's unique checks
			// ("COPY t, line n" only) when the batch of rows is flushed
			key, err := s.prepareRow(ctx, t, row, given, cf.key)
			if err != nil {
				return err
			}
			cf.key = key
			cf.curLine = nil
			b.add(cf.line, key, t, row)
			if len(b.lines) < copyBatchRows || cf.bulk && len(b.lines) < bulkChunk {
				return nil
			}
			return cf.flush(tx)
		})
		if err == nil {
			err = cf.flush(tx)
		}
		if err != nil {
			e := ToError(err)
			// a foreign key is checked by PostgreSQL's after-row triggers,
			// which run outside the COPY's error context
			if e.Where == "" && cf.line > 0 && fkCause(e) == nil {
				e.Where = cf.where()
			}
			return nil, e
		}
		return &Result{Tag: "COPY " + strconv.FormatInt(n, 10)}, nil
	}
	return &plan{usesT: true, run: run}, nil
}

// maxCopyLine bounds one line (one row) of COPY FROM data: the only part
// of the data held at once.
const maxCopyLine = 256 << 20

// copyFrom is one COPY FROM STDIN's reading state.
type copyFrom struct {
	s      *Session
	t      *catalog.Table
	o      *copyOpts
	target []int
	defs   []expr
	env    *env
	io     CopyIO
	ctx    context.Context

	buf   []byte // data received and not consumed: buf[pos:]
	pos   int
	eof   bool // CopyDone came
	ended bool // the end marker \. came
	eol   int  // the data's end-of-line style (eolNL, ...)
	line  int64
	// the column being converted (for the error's context)
	curCol  int
	curVal  string
	hasVal  bool
	curLine []byte // text and csv: the line, for errors about the whole line
	fields  [][]byte
	nulls   []bool
	scratch []byte
	// row and key are reused from one row to the next: an insert keeps
	// neither (the engine copies the key and the value)
	row   []types.Value
	key   []byte
	batch copyBatch
	// bulk: the rows go in by bulk loads (bulk.go) while the engine
	// takes them; batches are then bulkChunk rows
	bulk bool
}

// copyBatchRows is how many rows COPY FROM checks before it inserts them
// together: enough for their index lookups' cache misses to overlap
// (tupled.Tx.Prefetch), few enough that their slots stay cached until
// the inserts.
const copyBatchRows = 64

// copyBatch is the rows COPY FROM has parsed and checked and not yet
// inserted, as PostgreSQL's CopyMultiInsertBuffer: their lines (for an
// error's context), keys and encoded values (in buffers the next batch
// reuses) and values (for a duplicate's DETAIL).
type copyBatch struct {
	lines      []int64
	keyEnd     []int // keys[i] is keyBuf[keyEnd[i-1]:keyEnd[i]]; values alike
	valEnd     []int
	keyBuf     []byte
	valBuf     []byte
	keys, vals [][]byte
	rows       [][]types.Value
}

func (b *copyBatch) add(line int64, key []byte, t *catalog.Table, row []types.Value) {
	i := len(b.lines)
	b.lines = append(b.lines, line)
	b.keyBuf = append(b.keyBuf, key...)
	b.keyEnd = append(b.keyEnd, len(b.keyBuf))
	b.valBuf = catalog.AppendRow(b.valBuf, t, row)
	b.valEnd = append(b.valEnd, len(b.valBuf))
	if i == len(b.rows) {
		b.rows = append(b.rows, make([]types.Value, len(row)))
	}
	copy(b.rows[i], row)
}

// flush inserts the batch's rows in order (their index slots prefetched
// first) and empties it; an insert's error is worded with its row and
// line.
func (cf *copyFrom) flush(tx *tupled.Tx) error {
	b := &cf.batch
	if len(b.lines) == 0 {
		return nil
	}
	b.keys, b.vals = b.keys[:0], b.vals[:0]
	ka, va := 0, 0
	for i := range b.lines {
		b.keys = append(b.keys, b.keyBuf[ka:b.keyEnd[i]])
		b.vals = append(b.vals, b.valBuf[va:b.valEnd[i]])
		ka, va = b.keyEnd[i], b.valEnd[i]
	}
	if cf.bulk {
		n, err := tx.BulkLoad(cf.ctx, cf.t.Engine, b.keys, b.vals)
		switch {
		case errors.Is(err, tupled.ErrBulkRefused):
			cf.bulk = false // row by row from here on
		case err != nil:
			cf.line = b.lines[n]
			return dupRowError(err, cf.t, b.rows[n])
		default:
			b.reset()
			return nil
		}
	}
	tx.Prefetch(cf.t.Engine, b.keys)
	for i, key := range b.keys {
		if err := tx.Insert(cf.ctx, cf.t.Engine, key, b.vals[i]); err != nil {
			cf.line = b.lines[i]
			return dupRowError(err, cf.t, b.rows[i])
		}
	}
	b.reset()
	return nil
}

// reset empties the batch once its rows are in.
func (b *copyBatch) reset() {
	b.lines, b.keyEnd, b.valEnd = b.lines[:0], b.keyEnd[:0], b.valEnd[:0]
	b.keyBuf, b.valBuf = b.keyBuf[:0], b.valBuf[:0]
	for i := range b.rows {
		clear(b.rows[i]) // drop the strings of the rows inserted
	}
}

// where is PostgreSQL's CopyFromErrorCallback context.
func (cf *copyFrom) where() string {
	w := fmt.Sprintf("COPY %s, line %d", cf.t.Name, cf.line)
	switch {
	case cf.curCol >= 0 && cf.hasVal:
		return w + fmt.Sprintf(", column %s: \"%s\"", cf.t.Cols[cf.curCol].Name, limitPrintout(cf.curVal))
	case cf.curCol >= 0 && cf.o.format == copyBinary:
		return w + ", column " + cf.t.Cols[cf.curCol].Name
	case cf.curCol >= 0:
		return w + ", column " + cf.t.Cols[cf.curCol].Name + ": null input"
	case cf.curLine != nil:
		return w + ": \"" + limitPrintout(string(cf.curLine)) + "\""
	}
	return w
}

// limitPrintout cuts a value shown in an error context to 100 bytes, as
// PostgreSQL's MAX_COPY_DATA_DISPLAY.
func limitPrintout(s string) string {
	if len(s) <= 100 {
		return s
	}
	cut := 100
	for cut > 0 && s[cut]&0xc0 == 0x80 {
		cut--
	}
	return s[:cut] + "..."
}

func copyFormatError(format string, args ...any) *pgerror.Error {
	return pgerror.Errorf(pgerror.CodeBadCopyFormat, format, args...)
}

// more reads the next CopyData into buf, keeping buf[pos:]; false at
// CopyDone.
func (cf *copyFrom) more() (bool, error) {
	if cf.eof {
		return false, nil
	}
	if err := cf.ctx.Err(); err != nil {
		return false, err
	}
	data, err := cf.io.CopyInData(cf.ctx)
	if errors.Is(err, io.EOF) {
		cf.eof = true
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if cf.pos > 0 {
		n := copy(cf.buf, cf.buf[cf.pos:])
		cf.buf = cf.buf[:n]
		cf.pos = 0
	}
	if len(cf.buf)+len(data) > maxCopyLine {
		return false, pgerror.Errorf(pgerror.CodeProgramLimit, "COPY line is longer than %d bytes", maxCopyLine)
	}
	cf.buf = append(cf.buf, data...)
	return true, nil
}

// drain reads and ignores the data up to CopyDone (after the end marker).
func (cf *copyFrom) drain() error {
	for {
		cf.buf, cf.pos = cf.buf[:0], 0
		ok, err := cf.more()
		if err != nil || !ok {
			return err
		}
	}
}

func (cf *copyFrom) run(insert func([]types.Value) error) (int64, error) {
	cf.curCol = -1
	if cf.o.format == copyBinary {
		return cf.runBinary(insert)
	}
	var n int64
	ncols := len(cf.target)
	for {
		cf.line++ // the line being read, for an error's context
		line, ok, err := cf.nextLine()
		if err != nil {
			return n, err
		}
		if !ok {
			cf.line--
			return n, nil
		}
		cf.curLine = line
		if cf.line == 1 && cf.o.header {
			if cf.o.headerMatch {
				if err := cf.matchHeader(line); err != nil {
					return n, err
				}
			}
			continue
		}
		if cf.o.format == copyText {
			err = cf.splitText(line)
		} else {
			err = cf.splitCSV(line)
		}
		if err != nil {
			return n, err
		}
		if len(cf.fields) > ncols {
			return n, copyFormatError("extra data after last expected column")
		}
		if len(cf.fields) < ncols {
			return n, copyFormatError("missing data for column %q", cf.t.Cols[cf.target[len(cf.fields)]].Name)
		}
		row, err := cf.newRow()
		if err != nil {
			return n, err
		}
		for j, ci := range cf.target {
			col := cf.t.Cols[ci]
			if cf.nulls[j] {
				row[ci] = types.Null(col.Type)
				continue
			}
			cf.curCol, cf.curVal, cf.hasVal = ci, string(cf.fields[j]), true
			var v types.Value
			var err error
			if col.Type == types.TInterval && col.Prec > 0 {
				v, err = types.CastMod(types.Unknown(cf.curVal), col.Type, col.Mod(), false) // interval_in with the typmod ('5' in hours)
			} else {
				v, err = types.ParseText(col.Type, cf.curVal)
			}
			if err == nil && col.Int2 && (v.I < -32768 || v.I > 32767) {
				err = pgerror.Errorf(pgerror.CodeNumericRange, "value %q is out of range for type smallint", cf.curVal)
			}
			if err == nil && (col.Int2 || col.MaxLen > 0 || col.Prec > 0) {
				// as the type's input function with the column's typmod
				// (so prepareRow leaves the data's columns alone: given)
				v, err = types.ApplyMod(v, col.Mod(), false)
			}
			if err != nil {
				return n, err
			}
			row[ci] = v
		}
		cf.curCol, cf.hasVal = -1, false
		if err := insert(row); err != nil {
			return n, err
		}
		n++
		if n&255 == 0 {
			if err := cf.ctx.Err(); err != nil {
				return n, err
			}
		}
	}
}

// newRow is a row of the table with the defaults of the columns the data
// leaves out: cf.row, emptied.
func (cf *copyFrom) newRow() ([]types.Value, error) {
	if cf.row == nil {
		cf.row = make([]types.Value, len(cf.t.Cols))
	}
	row := cf.row
	clear(row)
	for i, d := range cf.defs {
		if d == nil {
			continue
		}
		v, err := d.eval(cf.env)
		if err != nil {
			return nil, err
		}
		if v.T != cf.t.Cols[i].Type {
			if v, err = types.Cast(v, cf.t.Cols[i].Type); err != nil {
				return nil, err
			}
		}
		row[i] = v
	}
	return row, nil
}

// End-of-line styles: the first line's end decides, as in PostgreSQL.
const (
	eolUnknown = iota
	eolNL
	eolCR
	eolCRNL
)

// nextLine returns the next line of text or csv data without its end of
// line (valid until the next call); false at the end of the data or after
// the end marker \. (whatever follows it is read and ignored, as
// PostgreSQL does). Lines end as the first one did (\n, \r or \r\n); a
// line end of another style in the data is 22P04, as in PostgreSQL.
func (cf *copyFrom) nextLine() ([]byte, bool, error) {
	if cf.ended {
		return nil, false, nil
	}
	csv := cf.o.format == copyCSV
	esc := cf.o.escape
	if esc == cf.o.quote {
		esc = 0 // the quote toggles; a doubled one toggles twice
	}
	i := cf.pos // scan position
	inQuote, lastWasEsc := false, false
	extraLines := 0
	for {
		b := cf.buf
	scan:
		for i < len(b) {
			c := b[i]
			if csv {
				if inQuote && c == esc {
					lastWasEsc = !lastWasEsc
				}
				if c == cf.o.quote && !lastWasEsc {
					inQuote = !inQuote
				}
				if c != esc {
					lastWasEsc = false
				}
				if inQuote {
					if (cf.eol == eolNL && c == '\n') || (cf.eol != eolNL && c == '\r') {
						extraLines++
					}
					i++
					continue
				}
			}
			if c == '\\' && (!csv || i == cf.pos) {
				if i+1 >= len(b) && !cf.eof {
					break // the escaped byte has not come yet
				}
				if i+1 < len(b) && b[i+1] == '.' {
					line, done, more, err := cf.endMarker(i)
					switch {
					case err != nil:
						return nil, false, err
					case more:
						break scan
					case done:
						return line, line != nil, nil
					}
					// csv: \. not followed by an end of line is data
				} else if !csv {
					i += 2
					continue
				}
			}
			switch c {
			case '\n':
				if cf.eol == eolUnknown {
					cf.eol = eolNL
				}
				if cf.eol != eolNL {
					return nil, false, eolError(csv, '\n')
				}
				return cf.endLine(i, i+1, extraLines), true, nil
			case '\r':
				if i+1 >= len(b) && !cf.eof {
					break scan // \r\n may be split across messages
				}
				crnl := i+1 < len(b) && b[i+1] == '\n'
				if cf.eol == eolUnknown {
					cf.eol = eolCR
					if crnl {
						cf.eol = eolCRNL
					}
				}
				switch {
				case cf.eol == eolNL, cf.eol == eolCRNL && !crnl:
					return nil, false, eolError(csv, '\r')
				case cf.eol == eolCRNL:
					return cf.endLine(i, i+2, extraLines), true, nil
				}
				return cf.endLine(i, i+1, extraLines), true, nil
			}
			i++
		}
		scanned := i - cf.pos
		ok, err := cf.more()
		if err != nil {
			return nil, false, err
		}
		i = cf.pos + scanned
		if !ok {
			if cf.pos >= len(cf.buf) {
				return nil, false, nil
			}
			if i < len(cf.buf) {
				continue // the end of the data: the bytes held back for more are complete
			}
			if csv && inQuote {
				cf.curLine = cf.buf[cf.pos:]
				return nil, false, copyFormatError("unterminated CSV quoted field")
			}
			// the last line without its end of line
			return cf.endLine(len(cf.buf), len(cf.buf), extraLines), true, nil
		}
	}
}

func eolError(csv bool, c byte) *pgerror.Error {
	switch {
	case csv && c == '\r':
		return &pgerror.Error{Code: pgerror.CodeBadCopyFormat, Message: "unquoted carriage return found in data", Hint: "Use quoted CSV field to represent carriage return."}
	case csv:
		return &pgerror.Error{Code: pgerror.CodeBadCopyFormat, Message: "unquoted newline found in data", Hint: "Use quoted CSV field to represent newline."}
	case c == '\r':
		return &pgerror.Error{Code: pgerror.CodeBadCopyFormat, Message: "literal carriage return found in data", Hint: `Use "\r" to represent carriage return.`}
	}
	return &pgerror.Error{Code: pgerror.CodeBadCopyFormat, Message: "literal newline found in data", Hint: `Use "\n" to represent newline.`}
}

// endMarker looks at the \. at buf[i] (PostgreSQL's CopyReadLineText):
// followed by the end of line, it ends the data — the line's bytes before
// it are its last line (nil if none) and the rest is drained (done); more:
// the bytes after it have not come yet. In text format anything else after
// it is 22P04; in csv (where it counts only at a line's start) it is then
// data (neither done nor more).
func (cf *copyFrom) endMarker(i int) (line []byte, done, more bool, err error) {
	b := cf.buf
	csv := cf.o.format == copyCSV
	j := i + 2
	need := 1
	if cf.eol == eolCRNL {
		need = 2
	}
	if len(b) < j+need && !cf.eof {
		return nil, false, true, nil
	}
	corrupt := func(msg string) ([]byte, bool, bool, error) {
		if csv {
			return nil, false, false, nil
		}
		return nil, false, false, copyFormatError("%s", msg)
	}
	at := func(k int) byte {
		if k < len(b) {
			return b[k]
		}
		return 0
	}
	c2 := at(j)
	if cf.eol == eolCRNL {
		if c2 == '\n' {
			return corrupt("end-of-copy marker does not match previous newline style")
		}
		if c2 != '\r' {
			return corrupt("end-of-copy marker corrupt")
		}
		j++
		c2 = at(j)
	}
	if c2 != '\r' && c2 != '\n' {
		return corrupt("end-of-copy marker corrupt")
	}
	if (cf.eol == eolNL || cf.eol == eolCRNL) && c2 != '\n' || cf.eol == eolCR && c2 != '\r' {
		return nil, false, false, copyFormatError("end-of-copy marker does not match previous newline style")
	}
	if i > cf.pos {
		line = append([]byte(nil), b[cf.pos:i]...)
	}
	cf.ended = true
	return line, true, false, cf.drain()
}

// endLine ends the line buf[pos:end], the next one beginning at next.
func (cf *copyFrom) endLine(end, next, extraLines int) []byte {
	line := cf.buf[cf.pos:end]
	cf.pos = next
	cf.line += int64(extraLines)
	return line
}

// splitText splits a text-format line into its fields, undoing the
// backslash escapes; a field that is the NULL string before unescaping is
// NULL.
func (cf *copyFrom) splitText(line []byte) error {
	cf.fields, cf.nulls = cf.fields[:0], cf.nulls[:0]
	out := cf.scratch[:0]
	// fields are collected in out; starts records where each begins
	type span struct{ a, b int }
	var spansArr [16]span
	spans := spansArr[:0]
	delim := cf.o.delim
	null := cf.o.null
	i := 0
	for {
		start := i
		a := len(out)
		for i < len(line) && line[i] != delim {
			c := line[i]
			i++
			if c != '\\' {
				out = append(out, c)
				continue
			}
			if i >= len(line) {
				out = append(out, '\\')
				break
			}
			c = line[i]
			i++
			switch c {
			case '0', '1', '2', '3', '4', '5', '6', '7':
				v := int(c - '0')
				for k := 0; k < 2 && i < len(line) && line[i] >= '0' && line[i] <= '7'; k++ {
					v = v<<3 + int(line[i]-'0')
					i++
				}
				out = append(out, byte(v))
			case 'x':
				if i < len(line) && isHex(line[i]) {
					v := hexVal(line[i])
					i++
					if i < len(line) && isHex(line[i]) {
						v = v<<4 + hexVal(line[i])
						i++
					}
					out = append(out, byte(v))
				} else {
					out = append(out, 'x')
				}
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'v':
				out = append(out, '\v')
			default:
				out = append(out, c)
			}
		}
		isNull := i-start == len(null) && string(line[start:i]) == null
		spans = append(spans, span{a, len(out)})
		cf.nulls = append(cf.nulls, isNull)
		if i >= len(line) {
			break
		}
		i++ // the delimiter
	}
	cf.scratch = out
	for _, sp := range spans {
		cf.fields = append(cf.fields, out[sp.a:sp.b])
	}
	return nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

// splitCSV splits a csv-format line into its fields (PostgreSQL's
// CopyReadAttributesCSV): an unquoted field equal to the NULL string is
// NULL, a quoted one never.
func (cf *copyFrom) splitCSV(line []byte) error {
	cf.fields, cf.nulls = cf.fields[:0], cf.nulls[:0]
	out := cf.scratch[:0]
	type span struct{ a, b int }
	var spansArr [16]span
	spans := spansArr[:0]
	delim, quote, esc := cf.o.delim, cf.o.quote, cf.o.escape
	i := 0
	for {
		a := len(out)
		sawQuote := false
	field:
		for i < len(line) {
			c := line[i]
			i++
			if c == delim {
				i-- // the delimiter ends the field
				break
			}
			if c != quote {
				out = append(out, c)
				continue
			}
			sawQuote = true
			for {
				if i >= len(line) {
					return copyFormatError("unterminated CSV quoted field")
				}
				c = line[i]
				i++
				if c == esc && i < len(line) && (line[i] == esc || line[i] == quote) {
					out = append(out, line[i])
					i++
					continue
				}
				if c == quote {
					continue field
				}
				out = append(out, c)
			}
		}
		isNull := !sawQuote && string(out[a:]) == cf.o.null
		spans = append(spans, span{a, len(out)})
		cf.nulls = append(cf.nulls, isNull)
		if i >= len(line) {
			break
		}
		i++ // the delimiter
	}
	cf.scratch = out
	for _, sp := range spans {
		cf.fields = append(cf.fields, out[sp.a:sp.b])
	}
	return nil
}

// matchHeader checks HEADER MATCH: the header line names the columns, in
// order.
func (cf *copyFrom) matchHeader(line []byte) error {
	var err error
	if cf.o.format == copyText {
		err = cf.splitText(line)
	} else {
		err = cf.splitCSV(line)
	}
	if err != nil {
		return err
	}
	if len(cf.fields) != len(cf.target) {
		return copyFormatError("wrong number of fields in header line: got %d, expected %d", len(cf.fields), len(cf.target))
	}
	for j, ci := range cf.target {
		want := cf.t.Cols[ci].Name
		if cf.nulls[j] {
			return copyFormatError("column name mismatch in header line field %d: got null value (\"%s\"), expected \"%s\"", j+1, cf.o.null, want)
		}
		if got := string(cf.fields[j]); got != want {
			return copyFormatError("column name mismatch in header line field %d: got \"%s\", expected \"%s\"", j+1, got, want)
		}
	}
	return nil
}

// binarySignature begins binary COPY data.
var binarySignature = []byte("PGCOPY\n\xff\r\n\x00")

// need makes n bytes available at buf[pos:]; false if the data ends first.
func (cf *copyFrom) need(n int) (bool, error) {
	for len(cf.buf)-cf.pos < n {
		ok, err := cf.more()
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

func (cf *copyFrom) take(n int) []byte {
	b := cf.buf[cf.pos : cf.pos+n]
	cf.pos += n
	return b
}

func (cf *copyFrom) runBinary(insert func([]types.Value) error) (int64, error) {
	eofErr := func() error { return copyFormatError("unexpected EOF in COPY data") }
	ok, err := cf.need(len(binarySignature))
	if err != nil {
		return 0, err
	}
	if !ok || string(cf.take(len(binarySignature))) != string(binarySignature) {
		return 0, copyFormatError("COPY file signature not recognized")
	}
	if ok, err = cf.need(4); err != nil || !ok {
		return 0, orErr(err, copyFormatError("invalid COPY file header (missing flags)"))
	}
	flags := binary.BigEndian.Uint32(cf.take(4))
	if flags&(1<<16) != 0 {
		return 0, copyFormatError("invalid COPY file header (WITH OIDS)")
	}
	if flags>>16 != 0 {
		return 0, copyFormatError("unrecognized critical flags in COPY file header")
	}
	if ok, err = cf.need(4); err != nil || !ok {
		return 0, orErr(err, copyFormatError("invalid COPY file header (missing length)"))
	}
	ext := int(int32(binary.BigEndian.Uint32(cf.take(4))))
	if ext < 0 {
		return 0, copyFormatError("invalid COPY file header (missing length)")
	}
	if ok, err = cf.need(ext); err != nil || !ok {
		return 0, orErr(err, copyFormatError("invalid COPY file header (wrong length)"))
	}
	cf.take(ext)
	ncols := len(cf.target)
	var n int64
	for {
		cf.line++
		if ok, err = cf.need(2); err != nil {
			return n, err
		}
		if !ok {
			if cf.pos < len(cf.buf) {
				return n, eofErr()
			}
			cf.line--
			return n, nil // the data ends at a row's boundary, without the trailer
		}
		cnt := int(int16(binary.BigEndian.Uint16(cf.take(2))))
		if cnt == -1 {
			// the trailer: nothing may follow before CopyDone
			if ok, err = cf.need(1); err != nil {
				return n, err
			}
			if ok {
				return n, copyFormatError("received copy data after EOF marker")
			}
			return n, nil
		}
		if cnt != ncols {
			return n, copyFormatError("row field count is %d, expected %d", cnt, ncols)
		}
		row, err := cf.newRow()
		if err != nil {
			return n, err
		}
		for _, ci := range cf.target {
			cf.curCol = ci
			if ok, err = cf.need(4); err != nil || !ok {
				return n, orErr(err, eofErr())
			}
			size := int(int32(binary.BigEndian.Uint32(cf.take(4))))
			col := cf.t.Cols[ci]
			if size == -1 {
				row[ci] = types.Null(col.Type)
				continue
			}
			if size < 0 {
				return n, copyFormatError("invalid field size")
			}
			if ok, err = cf.need(size); err != nil || !ok {
				return n, orErr(err, eofErr())
			}
			b := cf.take(size)
			var v types.Value
			if col.Int2 && size == 2 {
				v = types.Int4(int32(int16(binary.BigEndian.Uint16(b))))
			} else if w := col.Type.Size(); w > 0 && size < int(w) {
				// as the type's receive function reading past its field
				return n, pgerror.Errorf(pgerror.CodeProtocolViolation, "insufficient data left in message")
			} else if w > 0 && size > int(w) {
				return n, pgerror.Errorf(pgerror.CodeInvalidBinary, "incorrect binary data format")
			} else if v, err = types.ParseBinary(col.Type, b); err != nil {
				return n, err
			}
			if col.Int2 || col.MaxLen > 0 || col.Prec > 0 { // prepareRow leaves them alone: given
				if v, err = types.ApplyMod(v, col.Mod(), false); err != nil {
					return n, err
				}
			}
			row[ci] = v
		}
		cf.curCol = -1
		if err := insert(row); err != nil {
			return n, err
		}
		n++
		if n&255 == 0 {
			if err := cf.ctx.Err(); err != nil {
				return n, err
			}
		}
	}
}

func orErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// ---- COPY TO STDOUT ----

func (s *Session) planCopyTo(st *pg.CopyStmt, o *copyOpts, names []string, params *[]types.Type) (*plan, error) {
	var q *plan
	var rel string
	if st.Query != nil {
		sel := st.Query.GetSelectStmt()
		if sel == nil {
			return nil, pgerror.NotSupported("COPY (%s) TO is not supported: only a SELECT", strings.TrimSuffix(nodeName(st.Query), "Stmt"))
		}
		var err error
		if q, err = s.planSelect(sel, params); err != nil {
			return nil, err
		}
	} else {
		t, target, err := s.copyTarget(st.Relation, names)
		if err != nil {
			return nil, err
		}
		rel = t.Name
		var sb strings.Builder
		sb.WriteString("SELECT ")
		for j, ci := range target {
			if j > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(quoteIdentifier(t.Cols[ci].Name))
		}
		sb.WriteString(" FROM ")
		sb.WriteString(quoteIdentifier(t.Name))
		sts, err := Parse(sb.String())
		if err != nil {
			return nil, err
		}
		if q, err = s.planSelect(sts[0].node.GetSelectStmt(), params); err != nil {
			return nil, err
		}
	}
	_ = rel
	cols := q.cols
	run := func(ctx context.Context, s *Session, params []types.Value) (*Result, error) {
		if s.copyIO == nil {
			return nil, pgerror.NotSupported("COPY TO STDOUT needs a client connection")
		}
		res, err := q.run(ctx, s, params)
		if err != nil {
			return nil, err
		}
		if err := s.copyIO.CopyOutStart(o.format == copyBinary, len(cols)); err != nil {
			return nil, err
		}
		var buf []byte
		if o.format == copyBinary {
			buf = append(buf, binarySignature...)
			buf = append(buf, 0, 0, 0, 0, 0, 0, 0, 0)
		} else if o.header {
			for j, c := range cols {
				if j > 0 {
					buf = append(buf, o.delim)
				}
				buf = o.appendField(buf, c.Name, len(cols) == 1)
			}
			buf = append(buf, '\n')
			if err := s.copyIO.CopyOutData(buf); err != nil {
				return nil, err
			}
			buf = buf[:0]
		}
		for _, r := range res.Rows {
			if o.format == copyBinary {
				buf = binary.BigEndian.AppendUint16(buf, uint16(len(r)))
				for _, v := range r {
					if v.Null {
						buf = binary.BigEndian.AppendUint32(buf, 0xffffffff)
						continue
					}
					at := len(buf)
					buf = append(buf, 0, 0, 0, 0)
					buf = v.AppendBinary(buf)
					binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
				}
			} else {
				for j, v := range r {
					if j > 0 {
						buf = append(buf, o.delim)
					}
					if v.Null {
						buf = append(buf, o.null...)
						continue
					}
					buf = o.appendField(buf, string(v.AppendText(nil)), len(r) == 1)
				}
				buf = append(buf, '\n')
			}
			if err := s.copyIO.CopyOutData(buf); err != nil {
				return nil, err
			}
			buf = buf[:0]
		}
		if o.format == copyBinary {
			buf = append(buf, 0xff, 0xff)
			if err := s.copyIO.CopyOutData(buf); err != nil {
				return nil, err
			}
		}
		if err := s.copyIO.CopyOutDone(); err != nil {
			return nil, err
		}
		return &Result{Tag: "COPY " + strconv.Itoa(len(res.Rows))}, nil
	}
	return &plan{usesT: q.usesT, run: run}, nil
}

// appendField appends a non-NULL value in the text or csv format
// (PostgreSQL's CopyAttributeOutText / CopyAttributeOutCSV); single: the
// row has one column (a csv "\." alone must then be quoted).
func (o *copyOpts) appendField(dst []byte, s string, single bool) []byte {
	if o.format == copyCSV {
		q := s == o.null || (single && s == `\.`)
		if !q {
			for i := 0; i < len(s); i++ {
				if c := s[i]; c == o.delim || c == o.quote || c == '\n' || c == '\r' {
					q = true
					break
				}
			}
		}
		if !q {
			return append(dst, s...)
		}
		dst = append(dst, o.quote)
		for i := 0; i < len(s); i++ {
			if c := s[i]; c == o.quote || c == o.escape {
				dst = append(dst, o.escape)
			}
			dst = append(dst, s[i])
		}
		return append(dst, o.quote)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			if o.delim == '\t' {
				dst = append(dst, '\\', 't')
			} else {
				dst = append(dst, c)
			}
		case '\v':
			dst = append(dst, '\\', 'v')
		default:
			if c == o.delim {
				dst = append(dst, '\\')
			}
			dst = append(dst, c)
		}
	}
	return dst
}

// quoteIdentifier double-quotes a name for SQL text.
func quoteIdentifier(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
