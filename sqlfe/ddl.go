package sqlfe

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

func (s *Session) planCreate(st *pg.CreateStmt) (*plan, error) {
	rv := st.Relation
	switch {
	case len(st.InhRelations) > 0:
		return nil, pgerror.NotSupported("INHERITS is not supported")
	case st.Partbound != nil || st.Partspec != nil:
		return nil, pgerror.NotSupported("partitioned tables are not supported")
	case st.OfTypename != nil:
		return nil, pgerror.NotSupported("CREATE TABLE OF is not supported")
	case st.Oncommit != pg.OnCommitAction_ONCOMMIT_NOOP && st.Oncommit != pg.OnCommitAction_ON_COMMIT_ACTION_UNDEFINED && rv.Relpersistence != "t":
		return nil, pgerror.Errorf(pgerror.CodeInvalidTableDef, "ON COMMIT can only be used on temporary tables")
	case st.Tablespacename != "":
		return nil, pgerror.NotSupported("TABLESPACE is not supported")
	case st.AccessMethod != "":
		return nil, pgerror.NotSupported("USING (table access method) is not supported")
	case rv.Relpersistence == "u":
		return nil, pgerror.NotSupported("UNLOGGED tables are not supported")
	}
	if err := storageParams(st.Options); err != nil { // altertable.go
		return nil, err
	}
	temp := rv.Relpersistence == "t"
	switch {
	case temp && rv.Schemaname == "public":
		return nil, pgerror.Errorf(pgerror.CodeInvalidTableDef, "cannot create temporary relation in non-temporary schema").At(rv.Location)
	case temp && rv.Schemaname != "" && rv.Schemaname != "pg_temp":
		return nil, pgerror.Errorf("3F000", "schema %q does not exist", rv.Schemaname).At(rv.Location)
	}
	if rv.Schemaname == "pg_temp" {
		rv = &pg.RangeVar{Relname: rv.Relname, Location: rv.Location}
		temp = true
	}
	name, err := relName(rv)
	if err != nil {
		return nil, err
	}
	t := &catalog.Table{Name: name, Key: -1, KeyFormat: catalog.KeyFormatTyped}
	var uniques []catalog.IndexDef // UNIQUE constraints, named when the table is created
	var fkeys []fkConstraint       // FOREIGN KEY constraints, resolved when the table is created (fk.go)
	var checks []*pg.Constraint    // CHECK constraints, compiled once every column is known (check.go)
	setKey := func(cols []string, conname string, loc int32) error {
		var idx []int
		for _, col := range cols {
			i := t.Col(col)
			if i < 0 {
				return pgerror.Errorf(pgerror.CodeUndefinedColumn, "column %q named in key does not exist", col).At(loc)
			}
			for _, j := range idx {
				if j == i {
					return pgerror.Errorf(pgerror.CodeDuplicateColumn, "column %q appears twice in primary key constraint", col).At(loc)
				}
			}
			idx = append(idx, i)
		}
		if t.Key >= 0 {
			return pgerror.Errorf(pgerror.CodeInvalidTableDef, "multiple primary keys for table %q are not allowed", name).At(loc)
		}
		for _, i := range idx {
			if ty := t.Cols[i].Type; !catalog.KeyTypeOK(t, ty) {
				return pgerror.NotSupported("a PRIMARY KEY of type %s is not supported", ty).At(loc)
			}
			t.Cols[i].NotNull = true
		}
		t.Key = idx[0]
		if len(idx) > 1 {
			t.KeyCols = idx // compositekey.go
		}
		t.PKeyName = conname
		return nil
	}
	constraint := func(c *pg.Constraint, col string) error {
		switch c.Contype {
		case pg.ConstrType_CONSTR_NOTNULL:
			if col == "" {
				return pgerror.NotSupported("table-level NOT NULL is not supported").At(c.Location)
			}
			t.Cols[t.Col(col)].NotNull = true
		case pg.ConstrType_CONSTR_NULL:
		case pg.ConstrType_CONSTR_PRIMARY:
			// INCLUDE (cols) only adds payload columns to PostgreSQL's
			// index; they are not key columns (an update of them is a
			// no-key update), so here it changes nothing.
			if len(c.Options) > 0 || c.Indexspace != "" || c.Deferrable {
				return pgerror.NotSupported("PRIMARY KEY options are not supported").At(c.Location)
			}
			for _, inc := range strs(c.Including) {
				if t.Col(inc) < 0 {
					return pgerror.Errorf(pgerror.CodeUndefinedColumn, "column %q named in key does not exist", inc).At(c.Location)
				}
			}
			keys := []string{col}
			if col == "" {
				keys = strs(c.Keys)
			}
			return setKey(keys, c.Conname, c.Location)
		case pg.ConstrType_CONSTR_UNIQUE: // index.go
			if len(c.Options) > 0 || c.Indexspace != "" || c.Deferrable || len(c.Including) > 0 || c.NullsNotDistinct {
				return pgerror.NotSupported("UNIQUE options are not supported").At(c.Location)
			}
			names := strs(c.Keys)
			if col != "" {
				names = []string{col}
			}
			cols, err := indexCols(t, names, c.Location)
			if err != nil {
				return err
			}
			uniques = append(uniques, catalog.IndexDef{Name: c.Conname, Cols: cols, Unique: true, Typed: true})
		case pg.ConstrType_CONSTR_CHECK:
			checks = append(checks, c)
		case pg.ConstrType_CONSTR_IDENTITY:
			if col == "" {
				return pgerror.NotSupported("table-level GENERATED ... AS IDENTITY is not supported").At(c.Location)
			}
			return identityConstraint(name, &t.Cols[t.Col(col)], c) // identity.go
		case pg.ConstrType_CONSTR_FOREIGN:
			if err := checkFKSyntax(c); err != nil {
				return err
			}
			fkeys = append(fkeys, fkConstraint{c: c, col: col})
		default:
			kinds := map[pg.ConstrType]string{pg.ConstrType_CONSTR_DEFAULT: "DEFAULT", pg.ConstrType_CONSTR_CHECK: "CHECK",
				pg.ConstrType_CONSTR_UNIQUE: "UNIQUE", pg.ConstrType_CONSTR_FOREIGN: "REFERENCES (foreign keys)",
				pg.ConstrType_CONSTR_IDENTITY: "GENERATED ... AS IDENTITY", pg.ConstrType_CONSTR_GENERATED: "GENERATED columns",
				pg.ConstrType_CONSTR_EXCLUSION: "EXCLUDE"}
			k := kinds[c.Contype]
			if k == "" {
				k = c.Contype.String()
			}
			return pgerror.NotSupported("constraint %s is not supported", k).At(c.Location)
		}
		return nil
	}
	var tableCons []*pg.Constraint
	for _, el := range st.TableElts {
		switch {
		case el.GetColumnDef() != nil:
			cd := el.GetColumnDef()
			if t.Col(cd.Colname) >= 0 {
				return nil, pgerror.Errorf(pgerror.CodeDuplicateColumn, "column %q specified more than once", cd.Colname).At(cd.Location)
			}
			if cd.CollClause != nil || cd.RawDefault != nil || cd.Identity != "" || cd.Generated != "" || len(cd.Fdwoptions) > 0 || cd.Compression != "" || cd.StorageName != "" {
				return nil, pgerror.NotSupported("column options other than PRIMARY KEY, NOT NULL and DEFAULT are not supported").At(cd.Location)
			}
			col := catalog.Column{Name: cd.Colname, NotNull: cd.IsNotNull}
			if st, int2, ok := serialType(cd.TypeName); ok {
				col.Type, col.Int2, col.Serial, col.NotNull = st, int2, true, true
			} else {
				typ, m, err := s.typeOfMod(cd.TypeName)
				if err != nil {
					return nil, err
				}
				col.Type, col.Int2, col.MaxLen, col.Varchar, col.Prec, col.Scale = typ, m.Int2, m.MaxLen, m.Varchar, m.Prec, m.Scale
			}
			t.Cols = append(t.Cols, col)
			for _, cn := range cd.Constraints {
				if c := cn.GetConstraint(); c != nil && c.Contype == pg.ConstrType_CONSTR_DEFAULT {
					if t.Cols[len(t.Cols)-1].Identity != "" {
						return nil, pgerror.Errorf(pgerror.CodeSyntax, "both default and identity specified for column %q of table %q", cd.Colname, name).At(c.Location)
					}
					if err := columnDefault(name, &t.Cols[len(t.Cols)-1], c); err != nil {
						return nil, err
					}
					continue
				}
				if err := constraint(cn.GetConstraint(), cd.Colname); err != nil {
					return nil, err
				}
			}
		case el.GetConstraint() != nil:
			tableCons = append(tableCons, el.GetConstraint())
		default:
			return nil, pgerror.NotSupported("%s is not supported in CREATE TABLE", nodeName(el))
		}
	}
	for _, cn := range st.Constraints {
		tableCons = append(tableCons, cn.GetConstraint())
	}
	for _, c := range tableCons {
		if err := constraint(c, ""); err != nil {
			return nil, err
		}
	}
	if err := addChecks(t, checks); err != nil { // check.go
		return nil, err
	}
	if len(t.Cols) > 1600 {
		return nil, pgerror.Errorf("54011", "tables can have at most 1600 columns")
	}
	if t.Key < 0 {
		t.AddHiddenKey()
	}
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		res := &Result{Tag: "CREATE TABLE"}
		exists := func() (*Result, error) {
			if st.IfNotExists {
				s.notice("NOTICE", pgerror.CodeDuplicateTable, "relation \""+name+"\" already exists, skipping")
				return res, nil
			}
			return nil, pgerror.Errorf(pgerror.CodeDuplicateTable, "relation %q already exists", name)
		}
		switch {
		case temp && s.tempNameTaken(name): // its own namespace, pg_temp (temp.go)
			return exists()
		case !temp && (s.lookupShared(name) != nil || s.catalogSnap().ByName[name] != nil || (name == "pg_locks" && rv.Schemaname == "pg_catalog")):
			return exists()
		case !temp && s.lookupEnum(name) != nil: // the table's row type would take the enum's name (enum.go)
			return nil, pgerror.Errorf(codeDuplicateObject, "type %q already exists", name).WithHint("A relation has an associated type of the same name, so you must use a name that doesn't conflict with any existing type.")
		}
		tx, err := s.ensureTx(ctx)
		if err != nil {
			return nil, err
		}
		if temp && (len(fkeys) > 0 || t.HasSerial()) {
			return nil, refuseTemp(&catalog.Table{Temp: true}, map[bool]string{true: "FOREIGN KEY", false: "a serial or identity column"}[len(fkeys) > 0])
		}
		if t.HasSerial() {
			// made once, outside any transaction, like the catalog
			if err := s.eng.db.CreateTableIfNotExists(ctx, SequenceTable); err != nil {
				return nil, err
			}
		}
		nt := *t
		nt.Cols = append([]catalog.Column(nil), t.Cols...)
		nt.Temp = temp // its names are pg_temp's (relNameTaken)
		taken := map[string]bool{}
		if err := s.claimPkeyName(&nt, taken); err != nil { // compositekey.go
			return nil, err
		}
		if !temp {
			if nt.Engine, err = s.eng.cat.NewEngineTable(ctx, s.eng.db, name); err != nil {
				return nil, err
			}
			s.created = append(s.created, nt.Engine)
		}
		for _, d := range uniques {
			if d.Name == "" {
				d.Name = s.chooseIndexName(&nt, d.Cols, "key", taken)
			} else if taken[d.Name] || s.relNameTaken(&nt, d.Name) {
				return nil, pgerror.Errorf(pgerror.CodeDuplicateTable, "relation %q already exists", d.Name)
			}
			taken[d.Name] = true
			nt.Indexes = append(nt.Indexes, d)
		}
		if temp {
			return res, s.createTemp(ctx, &nt, st.Oncommit) // temp.go
		}
		if err := createIndexes(ctx, s.eng.db, &nt); err != nil {
			return nil, err
		}
		fkTaken := map[string]bool{}
		for _, fc := range fkeys {
			d, parent, err := s.resolveFK(&nt, fc, fkTaken)
			if err != nil {
				return nil, err
			}
			fkTaken[d.Name] = true
			nt.FKeys = append(nt.FKeys, d)
			if parent.Name == nt.Name {
				parent = &nt
			}
			if err := tx.AddForeignKey(ctx, engineFK(&nt, parent, d)); err != nil {
				return nil, err
			}
		}
		data, err := json.Marshal(&nt)
		if err != nil {
			return nil, err
		}
		if err := tx.Insert(ctx, catalog.CatalogTable, []byte(name), data); err != nil {
			if errors.Is(err, tupled.ErrDuplicateKey) {
				return nil, pgerror.Errorf(pgerror.CodeDuplicateTable, "relation %q already exists", name)
			}
			return nil, err
		}
		s.stage(name, &nt)
		return res, nil
	}
	return &plan{usesT: true, run: run}, nil
}

func (s *Session) planDrop(st *pg.DropStmt) (*plan, error) {
	if st.RemoveType == pg.ObjectType_OBJECT_VIEW {
		return s.planDropView(st) // views.go
	}
	if st.RemoveType != pg.ObjectType_OBJECT_TABLE {
		return nil, pgerror.NotSupported("DROP %s is not supported", strings.TrimPrefix(st.RemoveType.String(), "OBJECT_"))
	}
	if st.Concurrent {
		return nil, pgerror.NotSupported("DROP ... CONCURRENTLY is not supported")
	}
	var names []string
	for _, o := range st.Objects {
		parts := strs(o.GetList().GetItems())
		switch {
		case len(parts) == 1:
		case len(parts) == 2 && parts[0] == "public":
		default:
			return nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "table %q does not exist", strings.Join(parts, "."))
		}
		names = append(names, parts[len(parts)-1])
	}
	run := func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		tx, err := s.ensureTx(ctx)
		if err != nil {
			return nil, err
		}
		drop, existing := map[string]bool{}, []string(nil)
		for _, name := range names {
			if s.lookupTemp(name) == nil && s.lookupTable(name) != nil {
				drop[name], existing = true, append(existing, name)
			}
		}
		if err := s.dropDependents(drop, existing); err != nil { // fk.go
			return nil, err
		}
		if err := s.dropViewsFor(ctx, tx, drop, st.Behavior == pg.DropBehavior_DROP_CASCADE); err != nil { // views.go
			return nil, err
		}
		for _, name := range names {
			if tt := s.lookupTemp(name); tt != nil { // pg_temp first (temp.go)
				if err := s.dropTemp(ctx, tx, tt); err != nil {
					return nil, err
				}
				continue
			}
			t := s.lookupTable(name)
			if t == nil && s.lookupView(name) != nil {
				return nil, pgerror.Errorf(pgerror.CodeWrongObjectType, "%q is not a table", name).WithHint("Use DROP VIEW to remove a view.")
			}
			if r := s.catalogSnap().ByName[name]; t == nil && r != nil && r.Kind == "S" {
				return nil, pgerror.Errorf(pgerror.CodeWrongObjectType, "%q is not a table", name).WithHint("Use DROP SEQUENCE to remove a sequence.")
			}
			if t == nil {
				if st.MissingOk {
					s.notice("NOTICE", "00000", "table \""+name+"\" does not exist, skipping")
					continue
				}
				return nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "table %q does not exist", name)
			}
			// PostgreSQL's DROP TABLE takes AccessExclusiveLock: it waits
			// for every transaction that has used the table.
			if err := tx.LockTable(ctx, t.Engine, tupled.AccessExclusive, false); err != nil {
				return nil, engineError(err, t)
			}
			if err := dropSequences(ctx, tx, s.lookupTable(name)); err != nil {
				return nil, err
			}
			if err := s.dropOwnedSequences(ctx, tx, name); err != nil { // sequence.go
				return nil, err
			}
			err := tx.Delete(ctx, catalog.CatalogTable, []byte(name))
			if errors.Is(err, tupled.ErrNotFound) {
				// dropped by a transaction that committed meanwhile
				if st.MissingOk {
					continue
				}
				return nil, pgerror.Errorf(pgerror.CodeUndefinedTable, "table %q does not exist", name)
			}
			if err != nil {
				return nil, err
			}
			s.stage(name, nil)
		}
		return &Result{Tag: "DROP TABLE"}, nil
	}
	return &plan{usesT: true, run: run}, nil
}

func constString(n *pg.Node) (string, bool) {
	if n == nil {
		return "", false
	}
	if tc := n.GetTypeCast(); tc != nil {
		return constString(tc.Arg)
	}
	k := n.GetAConst()
	if k == nil {
		return "", false
	}
	switch v := k.Val.(type) {
	case *pg.A_Const_Sval:
		return v.Sval.Sval, true
	case *pg.A_Const_Ival:
		return strconv.Itoa(int(v.Ival.Ival)), true
	case *pg.A_Const_Fval:
		return v.Fval.Fval, true
	case *pg.A_Const_Boolval:
		if v.Boolval.Boolval {
			return "on", true
		}
		return "off", true
	}
	return "", false
}

// txOptions applies BEGIN / SET TRANSACTION options.
func (s *Session) txOptions(opts []*pg.Node, apply bool) error {
	for _, o := range opts {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		v, _ := constString(d.Arg)
		switch d.Defname {
		case "transaction_isolation":
			iso, err := parseIso(v)
			if err != nil {
				return err
			}
			if apply {
				s.txIso = iso
			}
		case "transaction_read_only":
			if apply {
				s.txReadOnly = v == "1" || v == "on" || v == "true"
			}
		case "transaction_deferrable":
		default:
			return pgerror.NotSupported("transaction option %s is not supported", d.Defname)
		}
	}
	return nil
}

func (s *Session) planTxn(st *pg.TransactionStmt) (*plan, error) {
	if st.Chain {
		return nil, pgerror.NotSupported("AND CHAIN is not supported")
	}
	switch st.Kind {
	case pg.TransactionStmtKind_TRANS_STMT_BEGIN, pg.TransactionStmtKind_TRANS_STMT_START:
		if err := s.txOptions(st.Options, false); err != nil {
			return nil, err
		}
		return &plan{ctl: true, run: func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
			if s.block == blkExplicit {
				s.notice("WARNING", pgerror.CodeActiveTx, "there is already a transaction in progress")
				return &Result{Tag: "BEGIN"}, nil
			}
			if s.tx == nil {
				s.txIso, s.txReadOnly = s.defaultIso, false
				if err := s.txOptions(st.Options, true); err != nil {
					return nil, err
				}
			}
			s.block = blkExplicit
			return &Result{Tag: "BEGIN"}, nil
		}}, nil
	case pg.TransactionStmtKind_TRANS_STMT_COMMIT:
		return &plan{ctl: true, run: func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
			switch s.block {
			case blkFailed:
				s.rollback()
				s.block = blkNone
				return &Result{Tag: "ROLLBACK"}, nil
			case blkNone, blkImplicit:
				s.notice("WARNING", pgerror.CodeNoActiveTx, "there is no transaction in progress")
			}
			s.block = blkNone
			if err := s.commit(); err != nil {
				return nil, err
			}
			return &Result{Tag: "COMMIT"}, nil
		}}, nil
	case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK:
		return &plan{ctl: true, run: func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
			if s.block == blkNone || s.block == blkImplicit {
				s.notice("WARNING", pgerror.CodeNoActiveTx, "there is no transaction in progress")
			}
			s.rollback()
			s.block = blkNone
			return &Result{Tag: "ROLLBACK"}, nil
		}}, nil
	case pg.TransactionStmtKind_TRANS_STMT_SAVEPOINT, pg.TransactionStmtKind_TRANS_STMT_RELEASE, pg.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
		return s.planSavepoint(st)
	}
	return nil, pgerror.NotSupported("two-phase commit is not supported")
}

var settingDefaults = map[string]string{
	"lock_timeout": "0", "statement_timeout": "0", "application_name": "", "datestyle": "ISO, MDY", "timezone": "UTC",
	"extra_float_digits": "1", "search_path": `"$user", public`, "client_min_messages": "notice", "intervalstyle": "postgres",
	"default_transaction_isolation": "read committed", "transaction_isolation": "read committed",
	"client_encoding": "UTF8", "synchronous_commit": "on",
}

func (s *Session) planSet(st *pg.VariableSetStmt) (*plan, error) {
	var apply func(s *Session) error
	switch st.Kind {
	case pg.VariableSetKind_VAR_SET_VALUE:
		var vals []string
		for _, a := range st.Args {
			v, ok := constString(a)
			if !ok {
				return nil, pgerror.NotSupported("SET %s to this value is not supported", st.Name)
			}
			vals = append(vals, v)
		}
		val := strings.Join(vals, ", ")
		apply = func(s *Session) error { return s.setSetting(st.Name, val, st.IsLocal) }
	case pg.VariableSetKind_VAR_SET_DEFAULT, pg.VariableSetKind_VAR_RESET:
		def, ok := settingDefaults[strings.ToLower(st.Name)]
		if strings.ToLower(st.Name) == "deadlock_timeout" {
			def, ok = formatDuration(s.eng.deadlockTimeout), true
		}
		if !ok {
			key := strings.ToLower(st.Name)
			switch {
			case isCustomSetting(key):
				def = "" // a placeholder's reset value
			case SettingContext(key) == "user" || SettingContext(key) == "superuser":
				return nil, pgerror.NotSupported("RESET %s is not supported", st.Name)
			default:
				return nil, unimplementedSetting(st.Name) // 42704 or PostgreSQL's 55P02
			}
		}
		apply = func(s *Session) error { return s.setSetting(st.Name, def, st.IsLocal) }
	case pg.VariableSetKind_VAR_RESET_ALL:
		apply = func(s *Session) error {
			for _, k := range []string{"lock_timeout", "statement_timeout", "application_name", "default_transaction_isolation"} {
				if err := s.setSetting(k, settingDefaults[k], false); err != nil {
					return err
				}
			}
			for k := range s.settings {
				if isCustomSetting(k) {
					s.settings[k] = ""
				}
			}
			return nil
		}
	case pg.VariableSetKind_VAR_SET_MULTI:
		switch st.Name {
		case "TRANSACTION":
			if err := s.txOptions(st.Args, false); err != nil {
				return nil, err
			}
			apply = func(s *Session) error {
				if s.block != blkExplicit {
					s.notice("WARNING", pgerror.CodeNoActiveTx, "SET TRANSACTION can only be used in transaction blocks")
					return nil
				}
				if s.txStarted {
					return pgerror.Errorf(pgerror.CodeActiveTx, "SET TRANSACTION ISOLATION LEVEL must be called before any query")
				}
				return s.txOptions(st.Args, true)
			}
		case "SESSION CHARACTERISTICS":
			apply = func(s *Session) error {
				for _, o := range st.Args {
					d := o.GetDefElem()
					v, _ := constString(d.Arg)
					switch d.Defname {
					case "transaction_isolation":
						if err := s.setSetting("default_transaction_isolation", v, false); err != nil {
							return err
						}
					default:
						return pgerror.NotSupported("SET SESSION CHARACTERISTICS %s is not supported", d.Defname)
					}
				}
				return nil
			}
		default:
			return nil, pgerror.NotSupported("SET %s is not supported", st.Name)
		}
	default:
		return nil, pgerror.NotSupported("this form of SET is not supported")
	}
	tag := "SET"
	if st.Kind == pg.VariableSetKind_VAR_RESET || st.Kind == pg.VariableSetKind_VAR_RESET_ALL {
		tag = "RESET" // PostgreSQL's command tag for RESET
	}
	return &plan{run: func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		if err := apply(s); err != nil {
			return nil, err
		}
		return &Result{Tag: tag}, nil
	}}, nil
}

func (s *Session) planShow(st *pg.VariableShowStmt) (*plan, error) {
	name := strings.ToLower(st.Name)
	if name == "all" {
		return nil, pgerror.NotSupported("SHOW ALL is not supported")
	}
	if _, err := s.getSetting(name); err != nil {
		return nil, err
	}
	cols := []catalog.Column{{Name: showName(name), Type: types.TText}}
	return &plan{cols: cols, run: func(ctx context.Context, s *Session, _ []types.Value) (*Result, error) {
		v, err := s.getSetting(name)
		if err != nil {
			return nil, err
		}
		return &Result{Cols: cols, Rows: [][]types.Value{{types.Text(v)}}, Tag: "SHOW"}, nil
	}}, nil
}
