package sqlfe

import (
	"bytes"
	"context"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// onConflict is a compiled ON CONFLICT clause of an INSERT. It runs on the
// embedded API's Tx.Upsert, which holds PostgreSQL's rules (waiting for an
// inserter or deleter of the key, the conflicting row locked FOR NO KEY
// UPDATE, 40001 under REPEATABLE READ for a row the snapshot does not see);
// what is SQL's is here: the conflict target, SET and WHERE over the
// existing row and EXCLUDED, and "cannot affect row a second time".
type onConflict struct {
	t       *catalog.Table
	nothing bool      // DO NOTHING
	sets    []setItem // DO UPDATE SET, over the existing row ++ EXCLUDED
	where   expr      // DO UPDATE WHERE, likewise (nil: none)
	arbiter string    // the engine index of a unique index arbiter ("": the primary key; index.go)
}

// planOnConflict compiles st's ON CONFLICT clause for table t, with
// PostgreSQL's errors: DO UPDATE needs a conflict target, which must be the
// primary key (42P10 otherwise; 42704 for an unknown constraint name).
func (s *Session) planOnConflict(st *pg.InsertStmt, t *catalog.Table, params *[]types.Type) (*onConflict, error) {
	oc := st.OnConflictClause
	if oc == nil {
		return nil, nil
	}
	out := &onConflict{t: t, nothing: oc.Action == pg.OnConflictAction_ONCONFLICT_NOTHING}
	if inf := oc.Infer; inf != nil {
		var where string // the inference WHERE, for a partial unique index
		if inf.WhereClause != nil {
			var err error
			if where, err = deparseExpr(inf.WhereClause); err != nil {
				return nil, err
			}
		}
		if inf.Conname != "" {
			if d, ok := uniqueByName(t, inf.Conname); ok && !d.IndexOnly { // index.go
				out.arbiter = catalog.EngIndex(t, d.Name)
			} else if t.HiddenKey() || inf.Conname != t.PrimaryKeyName() {
				return nil, pgerror.Errorf("42704", "constraint %q for table %q does not exist", inf.Conname, t.Name)
			}
		} else if !pkeyByCols(t, inf.IndexElems) { // compositekey.go
			d, ok := uniqueByCols(t, inf.IndexElems, where) // index.go
			if !ok {
				return nil, pgerror.Errorf("42P10", "there is no unique or exclusion constraint matching the ON CONFLICT specification")
			}
			out.arbiter = catalog.EngIndex(t, d.Name)
		}
	} else if !out.nothing {
		e := pgerror.Errorf(pgerror.CodeSyntax, "ON CONFLICT DO UPDATE requires inference specification or constraint name").At(oc.Location)
		e.Hint = "For example, ON CONFLICT (column_name)."
		return nil, e
	}
	if out.nothing {
		return out, nil
	}
	_, c, err := s.targetTable(st.Relation, params)
	if err != nil {
		return nil, err
	}
	c.excluded = true
	sets, err := compileSets(c, t, oc.TargetList, !t.HiddenKey())
	if err != nil {
		return nil, err
	}
	out.sets = sets
	if oc.WhereClause != nil {
		w, err := c.compile(oc.WhereClause, types.TBool)
		if err != nil {
			return nil, err
		}
		if w.typ() != types.TBool {
			return nil, pgerror.Errorf(pgerror.CodeDatatypeMismatch, "argument of WHERE must be type boolean, not type %s", w.typ())
		}
		out.where = w
	}
	return out, nil
}

// upsertState is one INSERT … ON CONFLICT statement's run: the keys it
// wrote, for "cannot affect row a second time".
type upsertState struct {
	written map[string]bool
}

// insert inserts row (encoded key and value) or acts on the conflict. It
// returns the row the statement inserted or updated (for RETURNING and the
// count), or nil when it did nothing.
func (oc *onConflict) insert(ctx context.Context, tx *tupled.Tx, e *env, st *upsertState, key []byte, row []types.Value) ([]types.Value, error) {
	t := oc.t
	var result []types.Value
	var cbErr error
	var onConflictFn func(ekey, existing []byte) ([]byte, bool)
	target := key // the row inserted or updated
	// move: DO UPDATE SET assigned the primary key. The engine's upsert
	// locks the conflicting row and leaves the update to us: a key update
	// (Tx.UpdateKey: FOR UPDATE strength, waiting for FOR KEY SHARE), as
	// PostgreSQL's ON CONFLICT takes LockTupleExclusive when its SET
	// changes a key column.
	var move struct {
		newKey, value []byte
	}
	if !oc.nothing {
		onConflictFn = func(key, existing []byte) ([]byte, bool) {
			target = key
			if st.written[string(key)] {
				cbErr = &pgerror.Error{Code: "21000", Message: "ON CONFLICT DO UPDATE command cannot affect row a second time",
					Hint: "Ensure that no rows proposed for insertion within the same command have duplicate constrained values."}
				return nil, false
			}
			old := make([]types.Value, len(t.Cols))
			if err := catalog.DecodeRow(t, key, existing, old); err != nil {
				cbErr = err
				return nil, false
			}
			e.row = append(append(make([]types.Value, 0, 2*len(t.Cols)), old...), row...)
			if oc.where != nil {
				ok, err := truthy(oc.where, e)
				if err != nil {
					cbErr = err
					return nil, false
				}
				if !ok {
					return nil, false
				}
			}
			nr := append([]types.Value(nil), old...)
			for _, si := range oc.sets {
				v, err := si.x.eval(e)
				if err == nil && v.T != t.Cols[si.col].Type {
					v, err = types.Cast(v, t.Cols[si.col].Type)
				}
				if err != nil {
					cbErr = err
					return nil, false
				}
				nr[si.col] = v
			}
			if err := checkRow(t, nr); err != nil {
				cbErr = err
				return nil, false
			}
			result = nr
			if nk := catalog.RowKey(nil, t, nr); !bytes.Equal(nk, key) {
				move.newKey, move.value = nk, catalog.EncodeRow(t, nr)
				return nil, false
			}
			return catalog.EncodeRow(t, nr), true
		}
	}
	var out tupled.UpsertOutcome
	var err error
	if oc.arbiter != "" {
		out, err = tx.UpsertOn(ctx, t.Engine, oc.arbiter, key, catalog.EncodeRow(t, row), onConflictFn)
	} else {
		var fn func([]byte) ([]byte, bool)
		if onConflictFn != nil {
			fn = func(existing []byte) ([]byte, bool) { return onConflictFn(key, existing) }
		}
		out, err = tx.Upsert(ctx, t.Engine, key, catalog.EncodeRow(t, row), fn)
	}
	if cbErr != nil {
		return nil, cbErr
	}
	if err != nil {
		return nil, dupRowError(err, t, row)
	}
	if move.newKey != nil {
		if err := tx.UpdateKey(ctx, t.Engine, target, move.newKey, move.value); err != nil {
			return nil, dupRowError(err, t, result)
		}
		target, out = move.newKey, tupled.UpsertUpdated
	}
	switch out {
	case tupled.UpsertInserted:
		result = row
	case tupled.UpsertUnchanged:
		return nil, nil
	}
	if st.written == nil {
		st.written = map[string]bool{}
	}
	st.written[string(target)] = true
	return result, nil
}

// excludedColumn resolves EXCLUDED.name in an ON CONFLICT DO UPDATE
// clause: the proposed row, which follows the existing one in the row the
// clause is evaluated on.
func (c *compiler) excludedColumn(name string) (expr, bool) {
	for i, col := range c.cols {
		if col.Name == name && !col.Hidden {
			return &colExpr{idx: len(c.cols) + i, t: col.Type, m: col.Mod()}, true
		}
	}
	return nil, false
}
