package sqlfe

import (
	"context"
	"fmt"
	"math"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// SQL cursors: DECLARE name [BINARY] [NO] SCROLL CURSOR [WITH[OUT] HOLD]
// FOR query, FETCH / MOVE [direction] [FROM | IN] name, CLOSE name | ALL
// (psycopg's server-side cursors, psql's FETCH_COUNT).
//
// A cursor runs its query when it is declared, in the declaring
// transaction and with its snapshot, and keeps the rows; FETCH and MOVE
// walk them. So a cursor sees what PostgreSQL's would (its snapshot is the
// DECLARE's), but its rows are held in memory for its life, unlike
// PostgreSQL's, which computes them as fetched. A cursor without HOLD is
// closed when its transaction ends; one WITH HOLD stays until CLOSE or
// the session's end. FOR UPDATE/SHARE in a cursor's query locks every row
// when it is declared (PostgreSQL locks each as it is fetched).

// cursor is a declared cursor.
type cursor struct {
	cols   []catalog.Column
	rows   [][]types.Value
	pos    int // rows before the current position (0: before the first)
	hold   bool
	scroll bool // not NO SCROLL: backward fetches allowed
}

// PostgreSQL's cursor option bits (parsenodes.h).
const (
	cursorOptNoScroll = 0x4
	cursorOptHold     = 0x20
)

func (s *Session) planDeclare(st *pg.DeclareCursorStmt, params *[]types.Type) (*plan, error) {
	sel := st.Query.GetSelectStmt()
	if sel == nil {
		return nil, pgerror.NotSupported("DECLARE CURSOR is supported only for SELECT")
	}
	q, err := s.planSelect(sel, params)
	if err != nil {
		return nil, err
	}
	hold := st.Options&cursorOptHold != 0
	run := func(ctx context.Context, s *Session, pv []types.Value) (*Result, error) {
		if !hold && s.block != blkExplicit {
			return nil, pgerror.Errorf(pgerror.CodeNoActiveTx, "DECLARE CURSOR can only be used in transaction blocks")
		}
		if _, ok := s.cursors[st.Portalname]; ok {
			return nil, pgerror.Errorf(pgerror.CodeDuplicateCursor, "cursor %q already exists", st.Portalname)
		}
		res, err := q.run(ctx, s, pv)
		if err != nil {
			return nil, err
		}
		if s.cursors == nil {
			s.cursors = map[string]*cursor{}
		}
		s.cursors[st.Portalname] = &cursor{cols: q.cols, rows: res.Rows, hold: hold, scroll: st.Options&cursorOptNoScroll == 0}
		return &Result{Tag: "DECLARE CURSOR"}, nil
	}
	return &plan{usesT: true, run: run}, nil
}

func (s *Session) planFetch(st *pg.FetchStmt) (*plan, error) {
	c, ok := s.cursors[st.Portalname]
	if !ok {
		return nil, pgerror.Errorf(pgerror.CodeInvalidCursor, "cursor %q does not exist", st.Portalname)
	}
	var cols []catalog.Column
	if !st.Ismove {
		cols = c.cols
	}
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		c, ok := s.cursors[st.Portalname]
		if !ok {
			return nil, pgerror.Errorf(pgerror.CodeInvalidCursor, "cursor %q does not exist", st.Portalname)
		}
		rows, err := c.fetch(st.Direction, st.HowMany)
		if err != nil {
			return nil, err
		}
		verb := "FETCH"
		if st.Ismove {
			verb, cols = "MOVE", nil
		}
		res := &Result{Cols: cols, Tag: fmt.Sprintf("%s %d", verb, len(rows))}
		if !st.Ismove {
			res.Rows = rows
		}
		return res, nil
	}
	// the columns are the cursor's, known once it is declared: not
	// reused across statements
	return &plan{cols: cols, usesT: true, run: run, volatile: true}, nil
}

// fetch moves the cursor and returns the rows it passed over, as
// PostgreSQL's PortalRunFetch does.
func (c *cursor) fetch(dir pg.FetchDirection, n int64) ([][]types.Value, error) {
	total := len(c.rows)
	switch dir {
	case pg.FetchDirection_FETCH_ABSOLUTE, pg.FetchDirection_FETCH_RELATIVE:
		target := int64(c.pos) + n
		if dir == pg.FetchDirection_FETCH_ABSOLUTE {
			target = n
			if n < 0 {
				target = int64(total) + n + 1
			}
		}
		if target < int64(c.pos) && !c.scroll {
			return nil, &pgerror.Error{Code: pgerror.CodeObjectNotInState, Message: "cursor can only scan forward", Hint: "Declare it with SCROLL option to enable backward scan."}
		}
		switch {
		case target <= 0:
			c.pos = 0
			return nil, nil
		case target > int64(total):
			c.pos = total + 1
			return nil, nil
		}
		c.pos = int(target)
		return c.rows[c.pos-1 : c.pos], nil
	case pg.FetchDirection_FETCH_BACKWARD:
		if !c.scroll {
			return nil, &pgerror.Error{Code: pgerror.CodeObjectNotInState, Message: "cursor can only scan forward", Hint: "Declare it with SCROLL option to enable backward scan."}
		}
		if n == math.MaxInt64 || n > int64(c.pos) {
			n = int64(c.pos)
		}
		var out [][]types.Value
		for i := 0; i < int(n); i++ {
			c.pos--
			if c.pos >= 1 && c.pos <= total {
				out = append(out, c.rows[c.pos-1])
			}
		}
		if c.pos > total {
			c.pos = total
		}
		return out, nil
	}
	// FORWARD (and NEXT: FORWARD 1; ALL: the rest)
	start := min(c.pos, total)
	end := total
	if n <= int64(total-start) {
		end = start + int(n)
	}
	c.pos = end
	if n > int64(total-start) {
		c.pos = total + 1 // ran past the last row
	}
	return c.rows[start:end], nil
}

func (s *Session) planClosePortal(st *pg.ClosePortalStmt) (*plan, error) {
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		if st.Portalname == "" { // CLOSE ALL
			s.cursors = nil
			return &Result{Tag: "CLOSE CURSOR ALL"}, nil
		}
		if _, ok := s.cursors[st.Portalname]; !ok {
			return nil, pgerror.Errorf(pgerror.CodeInvalidCursor, "cursor %q does not exist", st.Portalname)
		}
		delete(s.cursors, st.Portalname)
		return &Result{Tag: "CLOSE CURSOR"}, nil
	}
	return &plan{run: run}, nil
}

// CursorColumns returns the columns of SQL cursor name, if it is declared
// (a client's Describe of a portal may name one).
func (s *Session) CursorColumns(name string) ([]catalog.Column, bool) {
	c, ok := s.cursors[name]
	if !ok {
		return nil, false
	}
	return c.cols, true
}

// closeTxCursors closes the cursors without HOLD: their transaction has
// ended.
func (s *Session) closeTxCursors() {
	for name, c := range s.cursors {
		if !c.hold {
			delete(s.cursors, name)
		}
	}
}
