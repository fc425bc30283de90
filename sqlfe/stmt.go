package sqlfe

import (
	"context"
	"errors"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/pganalyze/pg_query_go/v6/parser"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Stmt is one parsed statement, prepared for execution: its parameter types
// and result columns are known once Prepare (or the first Execute) analysed
// it against the catalog.
type Stmt struct {
	SQL    string // the statement's text
	node   *pg.Node
	loc    int32 // offset of the statement in the query string it came from
	params []types.Type
	p      *plan
	gen    uint64
	// tempGen: the session's temporary tables' generation it was planned
	// at (temp.go)
	tempGen uint64
	simple  bool // from Parse, not Prepare: no parameter can be bound
	// declared are the parameter type OIDs the client gave in Parse (0:
	// none): reported back as declared, and a smallint's binary form is
	// two bytes
	declared []uint32
}

// Result is what a statement returns.
type Result struct {
	Cols []catalog.Column // nil: the statement returns no rows (no RowDescription)
	Rows [][]types.Value  // full rows, in order
	Tag  string           // the command tag (SELECT 3, INSERT 0 1, ...)
	// DiscardAll: the statement was DISCARD ALL, which drops the
	// protocol-level prepared statements and portals too (notify.go)
	DiscardAll bool
}

// plan is an analysed statement.
type plan struct {
	cols  []catalog.Column
	ctl   bool // transaction control: runs outside the implicit-transaction handling
	usesT bool // reads or writes through the transaction
	run   func(ctx context.Context, s *Session, params []types.Value) (*Result, error)
	// for EXPLAIN: the general query path's plan, or a one-table SELECT's
	// drawing of itself
	root    relNode
	explain func(w *strings.Builder)
	// volatile: analysed anew for each execution (a FETCH's columns are
	// its cursor's)
	volatile bool
}

// Parse splits sql into statements with PostgreSQL's parser. An empty query
// gives no statements.
//
// The text is checked first (checkText): invalid encoding gives 22021 and
// nesting deeper than maxExprDepth gives 54001 without calling the C parser,
// which would overflow its stack on it.
func Parse(sql string) ([]*Stmt, error) {
	if e := checkText(sql); e != nil {
		return nil, e
	}
	tree, err := pg.Parse(sql)
	if err != nil {
		var pe *parser.Error
		if errors.As(err, &pe) {
			code := pgerror.CodeSyntax
			if strings.HasPrefix(pe.Message, "invalid byte sequence for encoding") {
				code = pgerror.CodeCharacterNotInRepertoire // E'\x00', E'\xff'
			}
			if grammarWindowing[pe.Message] {
				code = pgerror.CodeWindowing // the grammar's frame checks (gram.y's ERRCODE_WINDOWING)
			}
			return nil, &pgerror.Error{Code: code, Message: pe.Message, Position: int32(pe.Cursorpos)}
		}
		if strings.Contains(err.Error(), "exceeded maximum recursion depth") {
			return nil, errStackDepth() // the Go protobuf decoder's own limit
		}
		return nil, pgerror.Errorf(pgerror.CodeSyntax, "%v", err)
	}
	if e := checkLiterals(sql); e != nil { // literals.go
		return nil, e
	}
	var out []*Stmt
	for _, rs := range tree.Stmts {
		text := sql
		if rs.StmtLen > 0 && int(rs.StmtLocation+rs.StmtLen) <= len(sql) {
			text = sql[rs.StmtLocation : rs.StmtLocation+rs.StmtLen]
		} else if int(rs.StmtLocation) <= len(sql) {
			text = sql[rs.StmtLocation:]
		}
		out = append(out, &Stmt{SQL: strings.TrimSpace(text), node: rs.Stmt, loc: rs.StmtLocation, simple: true})
	}
	return out, nil
}

// grammarWindowing are the messages PostgreSQL's grammar raises with
// SQLSTATE 42P20 rather than a syntax error: pg_query reports every parser
// error alike.
var grammarWindowing = map[string]bool{
	"frame start cannot be UNBOUNDED FOLLOWING":                     true,
	"frame starting from following row cannot end with current row": true,
	"frame end cannot be UNBOUNDED PRECEDING":                       true,
	"frame starting from current row cannot have preceding rows":    true,
	"frame starting from following row cannot have preceding rows":  true,
}

// Prepare parses sql as one statement (nil for an empty query) with the
// given parameter types (0 = infer) and analyses it.
func (s *Session) Prepare(sql string, paramOIDs []uint32) (*Stmt, error) {
	sts, err := Parse(sql)
	if err != nil {
		return nil, err
	}
	if len(sts) > 1 {
		return nil, pgerror.Errorf(pgerror.CodeSyntax, "cannot insert multiple commands into a prepared statement")
	}
	if len(sts) == 0 {
		return nil, nil
	}
	st := sts[0]
	st.simple = false
	for _, oid := range paramOIDs {
		st.params = append(st.params, types.TypeForOID(oid))
	}
	st.declared = paramOIDs
	if _, err := s.planFor(st); err != nil {
		return nil, err
	}
	return st, nil
}

// ParamTypes are the statement's parameter types (after analysis).
func (st *Stmt) ParamTypes() []types.Type { return st.params }

// ParamOIDs are the parameter types as ParameterDescription reports them:
// a type the client declared, as declared (varchar stays 1043, smallint
// 21, as PostgreSQL does), else the type analysis gave it.
func (st *Stmt) ParamOIDs() []uint32 {
	out := make([]uint32, len(st.params))
	for i, t := range st.params {
		out[i] = t.OID()
		if i < len(st.declared) && st.declared[i] != 0 && types.TypeForOID(st.declared[i]) == t {
			out[i] = st.declared[i]
		}
	}
	return out
}

// ParseParam converts parameter i's value in the given format (1: binary)
// to a Value of its type.
func (st *Stmt) ParseParam(i int, binaryFormat bool, p []byte) (types.Value, error) {
	t := st.params[i]
	if !binaryFormat {
		return types.ParseText(t, string(p))
	}
	if i < len(st.declared) && st.declared[i] == types.OIDInt2 && t == types.TInt4 {
		if len(p) != 2 {
			return types.Value{}, pgerror.Errorf(pgerror.CodeInvalidBinary, "incorrect binary data format for type smallint")
		}
		return types.Int4(int32(int16(uint16(p[0])<<8 | uint16(p[1])))), nil
	}
	return types.ParseBinary(t, p)
}

// Describe returns the result columns of st (nil: no rows).
func (s *Session) Describe(st *Stmt) ([]catalog.Column, error) {
	p, err := s.planFor(st)
	if err != nil {
		return nil, err
	}
	return p.cols, nil
}

// planFor analyses st, reusing its plan while the catalog has not changed.
func (s *Session) planFor(st *Stmt) (*plan, error) {
	_, gen := s.eng.cat.Get("")
	if st.p != nil && st.gen == gen && st.tempGen == s.temps.gen && s.pending == nil && !st.p.volatile {
		return st.p, nil
	}
	params := append([]types.Type(nil), st.params...)
	p, err := s.analyze(st.node, &params)
	if err != nil {
		return nil, err // parse-tree locations are offsets in the whole query string already
	}
	if st.simple && len(params) > 0 {
		// a simple query has no parameters: $n is an error of analysis
		n, loc := firstParamRef(st.node.ProtoReflect())
		return nil, pgerror.Errorf(pgerror.CodeUndefinedParameter, "there is no parameter $%d", n).At(loc)
	}
	for i, t := range params {
		if t == types.TUnknown {
			params[i] = types.TText
		}
	}
	st.params, st.p, st.gen, st.tempGen = params, p, gen, s.temps.gen
	return p, nil
}

// firstParamRef finds the $n that comes first in the statement's text.
func firstParamRef(m protoreflect.Message) (num, loc int32) {
	loc = -1
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if p, ok := m.Interface().(*pg.ParamRef); ok {
			if loc < 0 || p.Location < loc {
				num, loc = p.Number, p.Location
			}
			return
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				for i := 0; i < v.List().Len(); i++ {
					walk(v.List().Get(i).Message())
				}
			case fd.Message() != nil && !fd.IsMap():
				walk(v.Message())
			}
			return true
		})
	}
	walk(m)
	return num, loc
}

func isTxnExit(n *pg.Node) bool {
	ts := n.GetTransactionStmt()
	if ts == nil {
		return false
	}
	switch ts.Kind {
	case pg.TransactionStmtKind_TRANS_STMT_COMMIT, pg.TransactionStmtKind_TRANS_STMT_ROLLBACK,
		pg.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO, pg.TransactionStmtKind_TRANS_STMT_PREPARE:
		return true
	}
	return false
}

// Execute runs st with params under ctx (cancelled by the connection on a
// CancelRequest or close). statement_timeout applies here. On error the
// transaction is rolled back (inside BEGIN the block becomes failed).
func (s *Session) Execute(ctx context.Context, st *Stmt, params []types.Value) (*Result, error) {
	if s.block == blkFailed && !isTxnExit(st.node) {
		return nil, pgerror.Errorf(pgerror.CodeInFailedTx, "current transaction is aborted, commands ignored until end of transaction block")
	}
	p, err := s.planFor(st)
	if err != nil {
		s.fail()
		return nil, ToError(err)
	}
	if len(params) < len(st.params) {
		s.fail()
		return nil, pgerror.Errorf(pgerror.CodeProtocolViolation, "bind message supplies %d parameters, but prepared statement requires %d", len(params), len(st.params))
	}
	if !p.ctl && s.block == blkNone {
		s.block = blkImplicit
	}
	if s.stmtTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.stmtTimeout)
		defer cancel()
	}
	res, err := p.run(ctx, s, params)
	if err != nil {
		e := ToError(err)
		if fkCause(e) != nil {
			s.describeFK(e) // fk.go
		}
		s.fail()
		return nil, e
	}
	if p.usesT && s.block == blkExplicit {
		s.txStarted = true
	}
	if res.Cols == nil && p.cols != nil {
		res.Cols = p.cols
	}
	return res, nil
}

// Abort ends the current group after a protocol-level error: like a failed
// statement.
func (s *Session) Abort() { s.fail() }

var stmtNames = map[string]string{
	"IndexStmt": "CREATE INDEX", "AlterTableStmt": "ALTER TABLE",
	"VacuumStmt": "VACUUM", "ExplainStmt": "EXPLAIN", "PrepareStmt": "PREPARE", "ExecuteStmt": "EXECUTE",
	"DeallocateStmt": "DEALLOCATE", "DoStmt": "DO", "LockStmt": "LOCK", "ViewStmt": "CREATE VIEW",
	"CreateSeqStmt": "CREATE SEQUENCE", "CreateFunctionStmt": "CREATE FUNCTION", "CreateSchemaStmt": "CREATE SCHEMA",
	"CreateTableAsStmt": "CREATE TABLE AS", "RenameStmt": "ALTER ... RENAME", "DeclareCursorStmt": "DECLARE CURSOR",
	"FetchStmt": "FETCH", "ClosePortalStmt": "CLOSE", "ListenStmt": "LISTEN", "NotifyStmt": "NOTIFY",
	"UnlistenStmt": "UNLISTEN", "DiscardStmt": "DISCARD", "CreateExtensionStmt": "CREATE EXTENSION",
	"CreatedbStmt": "CREATE DATABASE", "CheckPointStmt": "CHECKPOINT", "MergeStmt": "MERGE", "CallStmt": "CALL",
	"GrantStmt": "GRANT", "CreateRoleStmt": "CREATE ROLE", "ReindexStmt": "REINDEX",
}

func (s *Session) analyze(n *pg.Node, params *[]types.Type) (*plan, error) {
	switch {
	case n.GetSelectStmt() != nil:
		return s.planSelect(n.GetSelectStmt(), params)
	case n.GetInsertStmt() != nil:
		return s.planInsert(n.GetInsertStmt(), params)
	case n.GetUpdateStmt() != nil:
		return s.planUpdate(n.GetUpdateStmt(), params)
	case n.GetDeleteStmt() != nil:
		return s.planDelete(n.GetDeleteStmt(), params)
	case n.GetCreateStmt() != nil:
		return s.planCreate(n.GetCreateStmt())
	case n.GetViewStmt() != nil:
		return s.planCreateView(n.GetViewStmt()) // views.go
	case n.GetCreateSeqStmt() != nil:
		return s.planCreateSequence(n.GetCreateSeqStmt()) // sequence.go
	case n.GetAlterSeqStmt() != nil:
		return s.planAlterSequence(n.GetAlterSeqStmt())
	case n.GetDropStmt() != nil && n.GetDropStmt().RemoveType == pg.ObjectType_OBJECT_SEQUENCE:
		return s.planDropSequence(n.GetDropStmt())
	case n.GetDropStmt() != nil && n.GetDropStmt().RemoveType == pg.ObjectType_OBJECT_TYPE:
		return s.planDropType(n.GetDropStmt()) // enum.go
	case n.GetCreateEnumStmt() != nil:
		return s.planCreateEnum(n.GetCreateEnumStmt())
	case n.GetAlterEnumStmt() != nil:
		return s.planAlterEnum(n.GetAlterEnumStmt())
	case n.GetRenameStmt() != nil && n.GetRenameStmt().RenameType == pg.ObjectType_OBJECT_TYPE:
		return s.planRenameType(n.GetRenameStmt())
	case n.GetDropStmt() != nil && n.GetDropStmt().RemoveType == pg.ObjectType_OBJECT_INDEX:
		return s.planDropIndex(n.GetDropStmt()) // index.go
	case n.GetDropStmt() != nil:
		return s.planDrop(n.GetDropStmt())
	case n.GetIndexStmt() != nil:
		return s.planCreateIndex(n.GetIndexStmt())
	case n.GetAlterTableStmt() != nil:
		if p, ok, err := s.planAlterCheck(n.GetAlterTableStmt()); ok { // check.go
			return p, err
		}
		if p, ok, err := s.planAlterRewrite(n.GetAlterTableStmt()); ok { // altertable.go
			return p, err
		}
		return s.planAlterTable(n.GetAlterTableStmt()) // fk.go
	case n.GetRenameStmt() != nil:
		return s.planRename(n.GetRenameStmt()) // altertable.go
	case n.GetCommentStmt() != nil:
		return s.planComment(n.GetCommentStmt()) // comment.go
	case n.GetTransactionStmt() != nil:
		return s.planTxn(n.GetTransactionStmt())
	case n.GetVariableSetStmt() != nil:
		return s.planSet(n.GetVariableSetStmt())
	case n.GetVariableShowStmt() != nil:
		return s.planShow(n.GetVariableShowStmt())
	case n.GetPrepareStmt() != nil:
		return s.planPrepare(n.GetPrepareStmt())
	case n.GetExecuteStmt() != nil:
		return s.planExecute(n.GetExecuteStmt(), params)
	case n.GetDeallocateStmt() != nil:
		return s.planDeallocate(n.GetDeallocateStmt())
	case n.GetLockStmt() != nil:
		return s.planLock(n.GetLockStmt())
	case n.GetDeclareCursorStmt() != nil:
		return s.planDeclare(n.GetDeclareCursorStmt(), params) // cursor.go
	case n.GetFetchStmt() != nil:
		return s.planFetch(n.GetFetchStmt())
	case n.GetClosePortalStmt() != nil:
		return s.planClosePortal(n.GetClosePortalStmt())
	case n.GetVacuumStmt() != nil:
		return s.planVacuum(n.GetVacuumStmt()) // vacuum.go
	case n.GetExplainStmt() != nil:
		return s.planExplain(n.GetExplainStmt(), params) // query.go
	case n.GetCopyStmt() != nil:
		return s.planCopy(n.GetCopyStmt(), params) // copy.go
	case n.GetTruncateStmt() != nil:
		return s.planTruncate(n.GetTruncateStmt()) // truncate.go
	case n.GetListenStmt() != nil:
		return s.planListen(n.GetListenStmt()) // notify.go
	case n.GetUnlistenStmt() != nil:
		return s.planUnlisten(n.GetUnlistenStmt())
	case n.GetNotifyStmt() != nil:
		return s.planNotify(n.GetNotifyStmt())
	case n.GetDiscardStmt() != nil:
		return s.planDiscard(n.GetDiscardStmt())
	case n.GetCreateExtensionStmt() != nil:
		return s.planCreateExtension(n.GetCreateExtensionStmt()) // syscat.go
	}
	if name, ok := stmtNames[nodeKind(n)]; ok {
		return nil, pgerror.NotSupported("%s is not supported", name)
	}
	return nil, pgerror.NotSupported("%s is not supported", nodeName(n))
}
