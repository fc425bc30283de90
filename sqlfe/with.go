package sqlfe

import (
	"context"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// WITH whose sub-statements are data-modifying (INSERT, UPDATE, DELETE),
// beside a main SELECT that does not read them:
//
//	WITH t AS (INSERT … ON CONFLICT … DO UPDATE … WHERE …) SELECT * FROM colors;
//
// PostgreSQL runs every sub-statement to completion, in order, with the
// statement's one snapshot; the main query reads with that snapshot too, so
// it sees none of the sub-statements' effects (insert-conflict-do-update-3
// is about exactly that). This engine has no command ids — a read sees every
// earlier write of its own transaction — so the main query runs first, with
// the snapshot a statement starting now would take, and the sub-statements
// after it: the same rows, the same locks, the same waits. A main query that
// reads a sub-statement's RETURNING (FROM t), a SELECT sub-statement beside
// them, and WITH RECURSIVE with them are refused (0A000). A WITH whose
// queries are all SELECTs is recursive.go's.

// planWith plans a SELECT with a WITH clause; st is not modified.
func (s *Session) planWith(st *pg.SelectStmt, params *[]types.Type, keepUnknown bool) (*plan, error) {
	w := st.WithClause
	if allSelectCTEs(w) {
		return s.planQuery(st, params, keepUnknown) // recursive.go: WITH queries that are SELECTs
	}
	if w.Recursive {
		return nil, pgerror.NotSupported("WITH RECURSIVE is not supported")
	}
	var subs []*plan
	names := map[string]bool{}
	for _, n := range w.Ctes {
		cte := n.GetCommonTableExpr()
		if cte == nil {
			return nil, pgerror.NotSupported("WITH is not supported")
		}
		q := cte.Ctequery
		if q.GetInsertStmt() == nil && q.GetUpdateStmt() == nil && q.GetDeleteStmt() == nil {
			return nil, pgerror.NotSupported("WITH is supported only for data-modifying statements (INSERT, UPDATE, DELETE) the main query does not read")
		}
		if names[cte.Ctename] {
			return nil, pgerror.Errorf(pgerror.CodeDuplicateAlias, "WITH query name %q specified more than once", cte.Ctename)
		}
		names[cte.Ctename] = true
		p, err := s.analyze(q, params)
		if err != nil {
			return nil, err
		}
		subs = append(subs, p)
	}
	main := proto.Clone(st).(*pg.SelectStmt)
	main.WithClause = nil
	if readsAny(main.ProtoReflect(), names) {
		return nil, pgerror.NotSupported("a main query that reads a WITH query's rows is not supported")
	}
	mp, err := s.planSelectAs(main, params, keepUnknown)
	if err != nil {
		return nil, err
	}
	return &plan{cols: mp.cols, usesT: true, run: func(ctx context.Context, s *Session, pv []types.Value) (*Result, error) {
		res, err := mp.run(ctx, s, pv)
		if err != nil {
			return nil, err
		}
		for _, p := range subs {
			if _, err := p.run(ctx, s, pv); err != nil {
				return nil, err
			}
		}
		return res, nil
	}}, nil
}

// readsAny reports whether m names a relation in names (unqualified).
func readsAny(m protoreflect.Message, names map[string]bool) bool {
	if rv, ok := m.Interface().(*pg.RangeVar); ok {
		return rv.Schemaname == "" && names[rv.Relname]
	}
	found := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := 0; i < v.List().Len() && !found; i++ {
				found = readsAny(v.List().Get(i).Message(), names)
			}
		case fd.Message() != nil && !fd.IsMap():
			found = readsAny(v.Message(), names)
		}
		return !found
	})
	return found
}
