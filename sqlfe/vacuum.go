package sqlfe

import (
	"context"
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// VACUUM [FULL | FREEZE | VERBOSE | ANALYZE] [table [, ...]] and ANALYZE
// [table [, ...]]. VACUUM runs the engine's vacuum (tupled.DB.Vacuum: dead
// versions of every table are reclaimed, whichever tables are named, after
// the names are checked); ANALYZE has nothing to gather (there is no cost
// model) and only checks its names. As in PostgreSQL, VACUUM cannot run in
// a transaction block (25001); ANALYZE can.

func (s *Session) planVacuum(st *pg.VacuumStmt) (*plan, error) {
	var names []string
	for _, r := range st.Rels {
		vr := r.GetVacuumRelation()
		if vr == nil || vr.Relation == nil {
			return nil, pgerror.NotSupported("this VACUUM target is not supported")
		}
		name, err := relName(vr.Relation)
		if err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	for _, o := range st.Options {
		switch d := o.GetDefElem(); strings.ToLower(d.GetDefname()) {
		case "analyze", "verbose", "freeze", "full", "skip_locked", "index_cleanup", "process_toast", "truncate", "parallel", "disable_page_skipping":
		default:
			return nil, pgerror.Errorf(pgerror.CodeSyntax, "unrecognized %s option %q", map[bool]string{true: "VACUUM", false: "ANALYZE"}[st.IsVacuumcmd], d.GetDefname()).At(d.GetLocation())
		}
	}
	tag := "ANALYZE"
	if st.IsVacuumcmd {
		tag = "VACUUM"
	}
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		if st.IsVacuumcmd && s.block != blkNone {
			return nil, pgerror.Errorf(pgerror.CodeActiveTx, "VACUUM cannot run inside a transaction block")
		}
		for _, n := range names {
			if s.lookupView(n) != nil {
				s.notice("WARNING", "01000", fmt.Sprintf("skipping %q --- cannot %s non-tables or special system tables", n, strings.ToLower(tag)))
				continue
			}
			if s.lookupTable(n) == nil {
				return nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "relation %q does not exist", n)
			}
		}
		if st.IsVacuumcmd {
			s.eng.db.Vacuum()
		}
		return &Result{Tag: tag}, nil
	}
	return &plan{run: run, ctl: st.IsVacuumcmd}, nil
}
