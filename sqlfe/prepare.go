package sqlfe

import (
	"context"
	"fmt"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// SQL-level prepared statements: PREPARE name [(types)] AS statement,
// EXECUTE name [(args)], DEALLOCATE [PREPARE] name | ALL. A statement is
// analysed when prepared (errors show then) and again, as for the
// protocol's statements, when the catalog has changed since. They live in
// the session until deallocated or the session ends, whatever happens to
// transactions, as in PostgreSQL. (PostgreSQL shares one namespace between
// these and the protocol's named statements; here EXECUTE reaches only
// statements of PREPARE.)

func (s *Session) planPrepare(st *pg.PrepareStmt) (*plan, error) {
	var paramTypes []types.Type
	for _, n := range st.Argtypes {
		t, m, err := s.typeOfMod(n.GetTypeName())
		if err != nil {
			return nil, err
		}
		if m != (types.Mod{Varchar: m.Varchar}) {
			return nil, pgerror.NotSupported("parameter paramTypes with modifiers are not supported")
		}
		paramTypes = append(paramTypes, t)
	}
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		if _, ok := s.sqlPrep[st.Name]; ok {
			return nil, pgerror.Errorf(pgerror.CodeDuplicatePrepared, "prepared statement %q already exists", st.Name)
		}
		ps := &Stmt{node: st.Query, params: append([]types.Type(nil), paramTypes...)}
		if _, err := s.planFor(ps); err != nil {
			return nil, err
		}
		if s.sqlPrep == nil {
			s.sqlPrep = map[string]*Stmt{}
		}
		s.sqlPrep[st.Name] = ps
		return &Result{Tag: "PREPARE"}, nil
	}
	return &plan{run: run}, nil
}

func (s *Session) planExecute(st *pg.ExecuteStmt, params *[]types.Type) (*plan, error) {
	ps, ok := s.sqlPrep[st.Name]
	if !ok {
		return nil, pgerror.Errorf(pgerror.CodeUndefinedPrepared, "prepared statement %q does not exist", st.Name)
	}
	pp, err := s.planFor(ps)
	if err != nil {
		return nil, err
	}
	if len(st.Params) != len(ps.params) {
		return nil, &pgerror.Error{Code: pgerror.CodeSyntax, Message: fmt.Sprintf("wrong number of parameters for prepared statement %q", st.Name),
			Detail: fmt.Sprintf("Expected %d parameters but got %d.", len(ps.params), len(st.Params))}
	}
	c := &compiler{params: params}
	var args []expr
	for i, n := range st.Params {
		x, err := c.compile(n, ps.params[i])
		if err != nil {
			return nil, err
		}
		if want := ps.params[i]; x.typ() != want {
			// assignment coercion, as PostgreSQL's EXECUTE
			if !(types.IsNumber(x.typ()) && types.IsNumber(want)) && !(types.IsString(want) && x.typ() != types.TInt4Array) {
				return nil, &pgerror.Error{Code: pgerror.CodeDatatypeMismatch, Message: fmt.Sprintf("parameter $%d of type %s cannot be coerced to the expected type %s", i+1, x.typ(), want),
					Hint: "You will need to rewrite or cast the expression."}
			}
			x = &castExpr{arg: x, t: want}
		}
		args = append(args, x)
	}
	run := func(ctx context.Context, s *Session, params []types.Value) (*Result, error) {
		p, err := s.planFor(ps) // re-analysed if the catalog changed
		if err != nil {
			return nil, err
		}
		vals, err := project(args, &env{ctx: ctx, s: s, params: params})
		if err != nil {
			return nil, err
		}
		return p.run(ctx, s, vals)
	}
	return &plan{cols: pp.cols, usesT: pp.usesT, run: run}, nil
}

func (s *Session) planDeallocate(st *pg.DeallocateStmt) (*plan, error) {
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		if st.Name == "" { // ALL
			s.sqlPrep = nil
			return &Result{Tag: "DEALLOCATE ALL"}, nil
		}
		if _, ok := s.sqlPrep[st.Name]; !ok {
			return nil, pgerror.Errorf(pgerror.CodeUndefinedPrepared, "prepared statement %q does not exist", st.Name)
		}
		delete(s.sqlPrep, st.Name)
		return &Result{Tag: "DEALLOCATE"}, nil
	}
	return &plan{run: run}, nil
}
