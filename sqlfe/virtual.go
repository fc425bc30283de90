package sqlfe

import (
	"context"
	"encoding/hex"
	"sort"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// keyText renders an engine key of SQL table engine name e.
func (s *Session) keyText(engine string, key []byte) (string, string) {
	name := s.eng.cat.SQLName(engine)
	if name == "" {
		return engine, hex.EncodeToString(key)
	}
	t, _ := s.eng.cat.Get(name)
	if t == nil {
		return name, hex.EncodeToString(key)
	}
	k, err := keyString(t, key) // compositekey.go
	if err != nil {
		return name, hex.EncodeToString(key)
	}
	return name, k
}

func pgLocks(_ context.Context, s *Session) ([][]types.Value, error) {
	pids := s.eng.pidsByTx()
	spids := s.eng.pidsBySession()
	var rows [][]types.Value
	for _, l := range s.eng.db.Locks() {
		row := []types.Value{types.Null(types.TText), types.Null(types.TText), types.Null(types.TText), types.Null(types.TInt8), types.Null(types.TInt8), types.Null(types.TInt8), types.Null(types.TInt4), types.Text(strconv.FormatUint(l.TxID, 10)), types.Null(types.TInt4), types.Text(l.Mode), types.Bool(l.Granted), types.Null(types.TText)}
		const colVXact, colPid, colWaitStart = 7, 8, 11
		if l.Session != 0 {
			if l.TxID == 0 {
				row[colVXact] = types.Null(types.TText)
			}
			if pid, ok := spids[l.Session]; ok {
				row[colPid] = types.Int4(pid)
			}
		}
		switch {
		case strings.HasPrefix(l.Tag, "advisory "):
			row[0] = types.Text("advisory")
			if c, o, sub, ok := advisoryColumns(strings.TrimPrefix(l.Tag, "advisory ")); ok {
				row[4], row[5], row[6] = types.Int8(c), types.Int8(o), types.Int4(sub)
			}
		case strings.HasPrefix(l.Tag, "transaction "):
			row[0] = types.Text("transactionid")
			if id, err := strconv.ParseInt(strings.TrimPrefix(l.Tag, "transaction "), 10, 64); err == nil {
				row[3] = types.Int8(id)
			}
		case strings.HasPrefix(l.Tag, "tuple "):
			row[0] = types.Text("tuple")
			rest := strings.TrimPrefix(l.Tag, "tuple ")
			if i := strings.LastIndexByte(rest, '/'); i >= 0 {
				key, err := hex.DecodeString(rest[i+1:])
				rel, k := rest[:i], rest[i+1:]
				if err == nil {
					rel, k = s.keyText(rest[:i], key)
				}
				row[1], row[2] = types.Text(rel), types.Text(k)
			}
		case strings.HasPrefix(l.Tag, "relation "):
			row[0] = types.Text("relation")
			rel := strings.TrimPrefix(l.Tag, "relation ")
			if name := s.eng.cat.SQLName(rel); name != "" {
				rel = name
			}
			row[1] = types.Text(rel)
		default:
			row[0] = types.Text(l.Tag)
		}
		if pid, ok := pids[l.TxID]; ok && l.TxID != 0 {
			row[colPid] = types.Int4(pid)
		}
		if !l.Granted && !l.WaitStart.IsZero() {
			row[colWaitStart] = types.Text(l.WaitStart.UTC().Format("2006-01-02 15:04:05.999999+00"))
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// pgrowlocks('t'): PostgreSQL's columns, with the primary key in locked_row
// (not a ctid) and the arrays rendered as text.
var pgRowLocksCols = []catalog.Column{
	{Name: "locked_row", Type: types.TText},
	{Name: "locker", Type: types.TInt8},
	{Name: "multi", Type: types.TBool},
	{Name: "xids", Type: types.TText},
	{Name: "modes", Type: types.TText},
	{Name: "pids", Type: types.TText},
}

var rowLockModes = map[tupled.LockStrength]string{
	tupled.ForKeyShare: "For Key Share", tupled.ForShare: "For Share",
	tupled.ForNoKeyUpdate: "For No Key Update", tupled.ForUpdate: "For Update",
}

// virtRows computes the rows of a function in FROM (a virtual relation);
// e is the env of the query reading it: its parameters and, in a
// correlated subquery, the outer row its arguments may read (psql's
// unnest(tc.reloptions) in an ARRAY subquery).
type virtRows func(e *env) ([][]types.Value, error)

func (s *Session) rangeFunction(rf *pg.RangeFunction, c *compiler) (virtRows, []catalog.Column, string, error) {
	if virt, cols, rel, ok, err := s.catalogRangeFunction(rf, c); ok { // catfuncs.go
		return virt, cols, rel, err
	}
	if rf.Ordinality || rf.IsRowsfrom || len(rf.Functions) != 1 || len(rf.Coldeflist) > 0 {
		return nil, nil, "", pgerror.NotSupported("this function in FROM is not supported")
	}
	items := rf.Functions[0].GetList().GetItems()
	if len(items) == 0 || items[0].GetFuncCall() == nil {
		return nil, nil, "", pgerror.NotSupported("this function in FROM is not supported")
	}
	fc := items[0].GetFuncCall()
	names := strs(fc.Funcname)
	name := names[len(names)-1]
	if _, _, ok := srfOf(fc); ok {
		return srfInFrom(rf, fc, c) // srf.go
	}
	if name != "pgrowlocks" || (len(names) == 2 && names[0] != "public") {
		return nil, nil, "", pgerror.NotSupported("function %s() in FROM is not supported", strings.Join(names, ".")).At(fc.Location)
	}
	if len(fc.Args) != 1 {
		return nil, nil, "", pgerror.Errorf(pgerror.CodeUndefinedFunction, "function pgrowlocks with %d arguments does not exist", len(fc.Args)).At(fc.Location)
	}
	arg, err := c.compile(fc.Args[0], types.TText)
	if err != nil {
		return nil, nil, "", err
	}
	if arg.typ() != types.TText {
		return nil, nil, "", pgerror.Errorf(pgerror.CodeUndefinedFunction, "function pgrowlocks(%s) does not exist", arg.typ()).At(fc.Location)
	}
	rel := "pgrowlocks"
	if rf.Alias != nil {
		rel = rf.Alias.Aliasname
	}
	virt := func(e *env) ([][]types.Value, error) {
		ctx, s := e.ctx, e.s
		v, err := arg.eval(e)
		if err != nil {
			return nil, err
		}
		t := s.lookupTable(v.S)
		if t == nil {
			return nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "relation %q does not exist", v.S)
		}
		if t.Key < 0 {
			return nil, nil // a table without columns holds no rows
		}
		locks, err := s.eng.db.RowLocks(ctx, t.Engine)
		if err != nil {
			return nil, engineError(err, t)
		}
		pids := s.eng.pidsByTx()
		var rows [][]types.Value
		for _, rl := range locks {
			k, err := keyString(t, rl.Key)
			if err != nil {
				return nil, err
			}
			var xids, modes, ps []string
			idx := make([]int, len(rl.Lockers))
			for i := range idx {
				idx[i] = i
			}
			sort.Slice(idx, func(a, b int) bool { return rl.Lockers[idx[a]] < rl.Lockers[idx[b]] })
			for _, i := range idx {
				xids = append(xids, strconv.FormatUint(rl.Lockers[i], 10))
				modes = append(modes, `"`+rowLockModes[rl.Modes[i]]+`"`)
				if pid, ok := pids[rl.Lockers[i]]; ok {
					ps = append(ps, strconv.Itoa(int(pid)))
				} else {
					ps = append(ps, "NULL")
				}
			}
			locker := types.Null(types.TInt8)
			if len(rl.Lockers) == 1 {
				locker = types.Int8(int64(rl.Lockers[0]))
			}
			rows = append(rows, []types.Value{types.Text(k), locker, types.Bool(rl.Multi),
				types.Text("{" + strings.Join(xids, ",") + "}"), types.Text("{" + strings.Join(modes, ",") + "}"), types.Text("{" + strings.Join(ps, ",") + "}")})
		}
		return rows, nil
	}
	return virt, pgRowLocksCols, rel, nil
}
