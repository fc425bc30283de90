package sqlfe

// The system catalogs as the session sees them: the snapshot of the
// catalog with the session's own uncommitted DDL over it, a FROM item
// resolved to a catalog relation, and what package sql/syscat, which
// generates the relations' rows, reads of the session (catSession) and of
// the parser (deparser). CREATE EXTENSION is here for pg_extension's
// plpgsql.

import (
	"context"
	"fmt"
	"strings"
	"sync"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/syscat"
	"github.com/tupled/tupled/sql/types"
)

// catSession is the session as syscat.Session.
type catSession struct{ s *Session }

func (c catSession) User() string         { return c.s.user }
func (c catSession) Database() string     { return c.s.database() }
func (c catSession) Enums() []*types.Enum { return c.s.enumList() }

func (c catSession) SequenceState(sq *catalog.Sequence) (int64, bool, error) {
	st, err := c.s.readSeqState(context.Background(), sq)
	return st.last, st.called, err
}

// Settings are the configuration parameters (pgsettings.go) with the
// session's values (a parameter it cannot read shows its default).
func (c catSession) Settings() []syscat.Setting {
	out := make([]syscat.Setting, 0, len(pgSettings))
	for _, st := range pgSettings {
		v, err := c.s.getSetting(st.name)
		if err != nil {
			v = st.def
		}
		out = append(out, syscat.Setting{Name: st.name, Value: v, Context: st.context, Default: st.def})
	}
	return out
}

// deparser is syscat.Deparser: CHECK constraints and index predicates
// printed as ruleutils does (checkdef.go).
type deparser struct{}

func (deparser) CheckDef(t *catalog.Table, d catalog.CheckDef, pretty bool) string {
	return checkConstraintDef(t, d, pretty)
}

func (deparser) CheckColumns(t *catalog.Table, d catalog.CheckDef) []int {
	n, err := checkNode(d)
	if err != nil {
		return nil
	}
	return checkColumns(t, n)
}

func (deparser) Predicate(t *catalog.Table, where string, pretty bool) string {
	n, err := checkNode(catalog.CheckDef{Expr: where})
	if err != nil {
		return strings.TrimSuffix(strings.TrimPrefix(where, "SELECT "), ";")
	}
	return (&ruleWriter{t: t, pretty: pretty}).expr(n).s
}

// RelationOID is table's OID as pg_class shows it (0 if there is none).
func (s *Session) RelationOID(table string) uint32 {
	return uint32(s.catalogSnap().TableOID[table])
}

var snapCache struct {
	sync.Mutex
	cat  *catalog.Catalog
	gen  uint64
	snap *syscat.Snap
}

// catalogSnap returns the catalog s sees: the committed tables with the
// session's uncommitted DDL over them.
func (s *Session) catalogSnap() *syscat.Snap {
	cat := &s.eng.cat
	if len(s.pending) == 0 && len(s.pendingSeqs) == 0 {
		gen := cat.Generation()
		snapCache.Lock()
		if snapCache.cat == cat && snapCache.gen == gen && snapCache.snap != nil {
			sn := snapCache.snap
			snapCache.Unlock()
			return sn
		}
		snapCache.Unlock()
	}
	m, seqs, gen := cat.Snapshot()
	for n, t := range s.pending {
		if t == nil {
			delete(m, n)
		} else {
			m[n] = t
		}
	}
	for n, sq := range s.pendingSeqs {
		if sq == nil {
			delete(seqs, n)
		} else {
			seqs[n] = sq
		}
	}
	sn := syscat.Build(m, seqs, deparser{})
	if len(s.pending) == 0 && len(s.pendingSeqs) == 0 {
		snapCache.Lock()
		snapCache.cat, snapCache.gen, snapCache.snap = cat, gen, sn
		snapCache.Unlock()
	}
	return sn
}

// catalogRelation finds the catalog relation rv names, if it names one:
// pg_catalog.x, information_schema.x, or an unqualified x of pg_catalog that
// no table of the user's shadows (pg_catalog is searched first in
// PostgreSQL, but a user table of a catalog's name was made in this
// catalog, which had no such relation then).
func (s *Session) catalogRelation(rv *pg.RangeVar) (string, *syscat.Relation, bool) {
	if rv.Catalogname != "" {
		return "", nil, false
	}
	switch rv.Schemaname {
	case "pg_catalog", "information_schema":
		r, ok := syscat.Relations[rv.Schemaname+"."+rv.Relname]
		return rv.Schemaname + "." + rv.Relname, r, ok
	case "", "public":
		if r, ok := s.seqRelation(rv.Relname); ok { // SELECT * FROM a sequence (sequence.go)
			return "public." + rv.Relname, r, true
		}
		r, ok := syscat.Relations["pg_catalog."+rv.Relname]
		if ok && s.lookupTable(rv.Relname) == nil && rv.Schemaname == "" {
			return "pg_catalog." + rv.Relname, r, true
		}
	}
	return "", nil, false
}

// isCatalogRelation reports whether rv names a catalog relation or a view
// (views.go): the general query path plans both (needsQueryPath).
func (s *Session) isCatalogRelation(rv *pg.RangeVar) bool {
	_, _, ok := s.catalogRelation(rv)
	return ok || s.viewOf(rv) != nil
}

// catalogFromItem is fromItem's RangeVar case for a catalog relation.
func (s *Session) catalogFromItem(rv *pg.RangeVar, name string, alias *pg.Alias) (relNode, *scope, bool, error) {
	full, r, ok := s.catalogRelation(rv)
	if !ok {
		return nil, nil, false, nil
	}
	if full == "pg_catalog.pg_locks" {
		return nil, nil, false, nil // virtual.go's
	}
	rs := &rowsScan{what: "Seq Scan on " + rv.Relname, rows: func(q *qctx) ([][]types.Value, error) {
		return r.Rows(catSession{q.s}, q.s.catalogSnap()), nil
	}}
	cols, err := aliasCols(r.Cols, alias)
	if err != nil {
		return nil, nil, true, err
	}
	return rs, &scope{rels: []*scopeRel{{name: name, cols: cols, rows: rs}}, width: len(cols)}, true, nil
}

// anyCatalogRelation reports whether st's FROM names a catalog relation
// anywhere (joins included), so that the query takes the general path.
func (s *Session) anyCatalogRelation(st *pg.SelectStmt) bool {
	var walk func(n *pg.Node) bool
	walk = func(n *pg.Node) bool {
		switch {
		case n == nil:
			return false
		case n.GetRangeVar() != nil:
			return s.isCatalogRelation(n.GetRangeVar())
		case n.GetJoinExpr() != nil:
			return walk(n.GetJoinExpr().Larg) || walk(n.GetJoinExpr().Rarg)
		}
		return false
	}
	for _, f := range st.FromClause {
		if walk(f) {
			return true
		}
	}
	return false
}

// planCreateExtension is CREATE EXTENSION [IF NOT EXISTS]: plpgsql exists
// already (42710, or a NOTICE with IF NOT EXISTS); no other extension is
// available (0A000, where PostgreSQL without the extension's files says
// 58P01).
func (s *Session) planCreateExtension(st *pg.CreateExtensionStmt) (*plan, error) {
	if st.Extname != "plpgsql" {
		return nil, pgerror.NotSupported("extension %q is not available", st.Extname)
	}
	return &plan{run: func(context.Context, *Session, []types.Value) (*Result, error) {
		if !st.IfNotExists {
			return nil, pgerror.Errorf("42710", "extension %q already exists", st.Extname)
		}
		s.notice("NOTICE", "42710", fmt.Sprintf("extension %q already exists, skipping", st.Extname))
		return &Result{Tag: "CREATE EXTENSION"}, nil
	}}, nil
}
