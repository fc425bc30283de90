package sqlfe

import (
	"fmt"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/eval"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// generateSeries compiles generate_series(start, stop [, step]) over
// integer or bigint, or (start, stop, step interval) over timestamp,
// timestamptz or date (srf.go calls it, for FROM and the select list);
// sql/eval's srf.go makes the rows.
func generateSeries(c *compiler, fc *pg.FuncCall) (*srfSpec, error) {
	if len(fc.Args) != 2 && len(fc.Args) != 3 {
		return nil, pgerror.NotSupported("generate_series with %d arguments is not supported", len(fc.Args)).At(fc.Location)
	}
	first, err := c.compile(fc.Args[0], types.TInt4)
	if err != nil {
		return nil, err
	}
	if types.IsDateTime(first.typ()) {
		return timestampSeries(fc, c, first)
	}
	var args []expr
	t := types.TInt4
	for _, a := range fc.Args {
		x, err := c.compile(a, types.TInt4)
		if err != nil {
			return nil, err
		}
		if !types.IsInt(x.typ()) {
			return nil, pgerror.NotSupported("generate_series over %s is not supported", x.typ()).At(fc.Location)
		}
		if x.typ() == types.TInt8 {
			t = types.TInt8
		}
		args = append(args, x)
	}
	gen := func(vs []types.Value) ([]types.Value, error) { return eval.IntSeries(vs, t) }
	return &srfSpec{name: "generate_series", args: args, t: t, gen: gen}, nil
}

// timestampSeries is generate_series(start, stop, step interval) over
// timestamp (a timestamp series) or timestamptz and date (a timestamptz
// series, as PostgreSQL resolves a date's): each value is the one before
// plus step, so a month step from January 31 gives February 29, then
// March 29.
func timestampSeries(fc *pg.FuncCall, c *compiler, first expr) (*srfSpec, error) {
	if len(fc.Args) != 3 {
		return nil, pgerror.Errorf(pgerror.CodeUndefinedFunction, "function generate_series(%s, %s) does not exist", first.typ(), first.typ()).At(fc.Location)
	}
	t := types.TTimestamptz
	if first.typ() == types.TTimestamp {
		t = types.TTimestamp
	}
	start, err := c.coerce(first, t)
	if err != nil {
		return nil, err
	}
	stop, err := c.compile(fc.Args[1], t)
	if err == nil {
		stop, err = c.coerce(stop, t)
	}
	if err != nil {
		return nil, err
	}
	step, err := c.compile(fc.Args[2], types.TInterval)
	if err == nil {
		step, err = c.coerce(step, types.TInterval)
	}
	if err != nil {
		return nil, err
	}
	if !types.IsDateTime(stop.typ()) || step.typ() != types.TInterval {
		return nil, pgerror.Errorf(pgerror.CodeUndefinedFunction, "function generate_series(%s, %s, %s) does not exist", start.typ(), stop.typ(), step.typ()).At(fc.Location)
	}
	gen := func(vs []types.Value) ([]types.Value, error) { return eval.TimestampSeries(vs, t) }
	return &srfSpec{name: "generate_series", args: []expr{start, stop, step}, t: t, gen: gen}, nil
}

// insertSelectRow is the row INSERT ... SELECT makes of each query row (of
// columns qcols): the query's columns assigned to the target columns, in
// order, the table's defaults elsewhere. named tells whether the INSERT
// listed its columns (without a list, a query narrower than the table
// fills the first columns).
func insertSelectRow(t *catalog.Table, target []int, qcols []catalog.Column, named bool) ([]expr, error) {
	switch {
	case len(qcols) > len(target):
		return nil, pgerror.Errorf(pgerror.CodeSyntax, "INSERT has more expressions than target columns")
	case len(qcols) < len(target) && named:
		return nil, pgerror.Errorf(pgerror.CodeSyntax, "INSERT has more target columns than expressions")
	}
	row := make([]expr, len(t.Cols))
	for i := range row {
		x, err := defaultExpr(t, t.Cols[i])
		if err != nil {
			return nil, err
		}
		row[i] = x
	}
	for j, qc := range qcols {
		col := t.Cols[target[j]]
		var x expr = &colExpr{idx: j, t: qc.Type, m: qc.Mod()}
		switch {
		case qc.Type == col.Type:
		case qc.Type == types.TUnknown, types.IsNumber(qc.Type) && types.IsNumber(col.Type), types.IsString(col.Type) && qc.Type != types.TInt4Array:
			x = &castExpr{arg: x, t: col.Type}
		default:
			return nil, &pgerror.Error{Code: pgerror.CodeDatatypeMismatch, Message: fmt.Sprintf("column %q is of type %s but expression is of type %s", col.Name, col.Type, qc.Type),
				Hint: "You will need to rewrite or cast the expression."}
		}
		row[target[j]] = x
	}
	return row, nil
}
