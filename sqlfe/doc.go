// Package sqlfe is tupled's SQL front end: it parses SQL with PostgreSQL's
// own parser (pg_query_go), analyses it against the catalog, and runs it
// over the embedded API (tupled.DB / tupled.Tx) — nothing below the root
// package is imported.
//
// The SQL layer is a house of packages; a statement walks through it so:
//
//	pgwire (a client's messages)
//	  → sqlfe.Parse / Session.Prepare (stmt.go): checkText bounds the
//	    nesting depth (depth.go), pg_query parses, one Stmt per statement
//	  → Session.planFor → analyze (stmt.go, ddl.go, dml.go, query_plan.go):
//	    names resolved against sql/catalog, expressions compiled into
//	    expr trees (compile.go, expr.go, funcs.go, strfuncs.go,
//	    textfuncs.go, datefuncs.go, conditional.go; the operators of a
//	    type in a file of its own: dateops.go, intervalops.go, rowcmp.go
//	    for row comparisons, jsonfuncs.go, byteafuncs.go, arrayfuncs.go
//	    for the array functions and ||, @>, <@, && on arrays): these
//	    resolve a call's function and argument types, and what the
//	    function or operator computes from the values is sql/eval's
//	    (the formatting functions, the date and interval functions and
//	    operators, ...); a plan of nodes built (dml.go's selectPlan for a
//	    one-table SELECT, UPDATE, DELETE; query.go's relNodes otherwise),
//	    reused while the catalog's generation is unchanged
//	  → plan.run (Session.Execute): the operators (query_exec.go, agg.go
//	    with orderedset.go for WITHIN GROUP and groupingsets.go for ROLLUP,
//	    CUBE and GROUPING SETS, window.go, srf.go for set-returning functions, hashjoin.go,
//	    lateral.go for LATERAL items,
//	    lockjoin.go, lockrows.go) over the engine's
//	    scans, indexes and row locks (tupled.Tx.Scan with ScanOptions.Lock),
//	    rows encoded and decoded by sql/catalog, datums from sql/types
//	  → Result (rows of types.Value, columns of catalog.Column) or a
//	    *pgerror.Error → pgwire (the wire formats: types' AppendText and
//	    AppendBinary).
//
// EXPLAIN prints the plan nodes that run (query.go planExplain, dml.go
// explain); EXPLAIN ANALYZE plans the SELECT by the general path for each
// execution, runs it with every node counted and timed, and prints each
// node's "(actual time=… rows=N loops=L)" and the summary as PostgreSQL
// does, never costs (explain_analyze.go, which reads EXPLAIN's options).
// Who owns what:
//
//	sql/pgerror  the error (SQLSTATE, message, position); below everything
//	sql/types    datums, their text and binary I/O, casts, comparison
//	sql/catalog  table definitions, the catalog's persistence and the
//	             committed Catalog, the row and key encodings
//	sql/eval     the built-in functions and operators that need no
//	             session: their bodies, over values (formatting, dates
//	             and intervals, ...), and the registry of the
//	             fixed-signature ones (eval.Builtins)
//	sqlfe        analysis, expressions and the resolution of function
//	             calls and operators, the functions that read the session
//	             (now, current_setting, nextval, ...), plans and operators,
//	             sessions and transactions, the system catalogs'
//	             generation (pgcatalog.go, infoschema.go, catfuncs.go),
//	             COPY, settings
//
// Each package's doc.go states its own invariants; those below are
// sqlfe's. Only pgwire and tests call sqlfe; sql/ packages never import it.
//
// Callers: pgwire (one Session per client connection) and tests. The Executor is
// shared and safe for concurrent use; a Session belongs to one goroutine,
// like a tupled.Tx (only its transaction id is read by other sessions, for
// pg_locks and pg_isolation_test_session_is_blocked, and its LISTEN inbox
// is written by the sessions that NOTIFY, under its own mutex: notify.go).
//
// Each Session owns a tupled.Session, the owner of its session-level
// advisory locks, and begins every transaction through it; Close (the
// connection's end) releases them. The pg_advisory_* functions run in the
// statement's transaction (advisory.go).
//
// Invariants:
//   - Table definitions, the catalog's persistence and the row and key
//     encodings are package sql/catalog's (its doc.go states their
//     invariants). sqlfe keeps a session's uncommitted DDL (Session.pending,
//     over the committed Catalog until commit), declares the catalog's
//     indexes and foreign keys with the engine, and numbers a hidden rowid
//     per table from an in-memory counter seeded from the table's highest
//     rowid (rowid.go).
//   - Datums are package sql/types' (Type, Value, text and binary I/O,
//     casts; its doc.go states their invariants) and errors package
//     sql/pgerror's; sqlfe compiles, plans and runs statements over them.
//   - A built-in function or operator that reads nothing of the session
//     is computed by package sql/eval (its doc.go says how to add one):
//     sqlfe resolves the call (argument types, overloads, NULL for a
//     strict function's NULL argument) and its expression node calls the
//     body there with the values; an env is the eval.Context of the few
//     that read the transaction's start. Those that read or change the
//     session, the clock or the engine stay here (funcs.go's builtins,
//     catfuncs.go, sequence.go, advisory.go, random, gen_random_uuid).
//   - ALTER TABLE forms that change how rows are stored (a new primary
//     key, a column added or dropped, a column's type changed:
//     altertype.go) rewrite the table into a new engine
//     table in the statement's transaction, under ACCESS EXCLUSIVE; the
//     catalog entry then names it and the old one is reclaimed like a
//     dropped table's (altertable.go).
//   - Sequences (sequence.go): a definition, transactional catalog data (a
//     standalone sequence's is an entry of the catalog table, a serial
//     column's is the column's), and a state, a row of the engine table
//     "_tupled_sequences" advanced by nextval and setval in transactions of
//     their own, so a value is never handed out twice and a rolled-back one
//     is not given back; a serial column's state row is deleted in the
//     DROP TABLE's transaction (defaults.go). An identity column is a
//     serial column with PostgreSQL's rewriter checks (identity.go).
//   - CHECK constraints are the table's (Table.Checks, SQL text compiled by
//     column name and cached per *Table) and are evaluated by checkRow,
//     the one place every row to be written passes, after NOT NULL
//     (check.go; pg_get_constraintdef's text: checkdef.go).
//   - WITH queries that are SELECTs take the general path: each is planned
//     before the main query, runs once per execution, and a recursive one
//     iterates its working table (recursive.go); data-modifying ones are
//     with.go's.
//   - UPDATE ... FROM and DELETE ... USING keep UPDATE's and DELETE's
//     locking scan: the join with the source (read once per execution) is
//     that scan's WHERE, so only joining rows are locked and the join is
//     rechecked on a newer version locked (dmljoin.go).
//   - Statements follow PostgreSQL's executor: a SELECT ... FOR <strength>
//     [NOWAIT | SKIP LOCKED], UPDATE and DELETE find their rows with the
//     API's locking scan (tupled.Tx.Scan with ScanOptions.Lock and Where,
//     lockrows.go): WHERE is checked on the snapshot's version, the row is
//     locked (under READ COMMITTED the newest version of a concurrent
//     committed update; under REPEATABLE READ that is 40001) and WHERE is
//     checked again on a newer version locked (EvalPlanQual; a row failing
//     it is left out but stays locked). That recheck lives only in
//     internal/engine/scan.go (engine.Tx.Scan); sqlfe has none of its own. A point
//     lookup is a scan of [key, key+"\x00") with Limit 1, a key range one
//     range scan; a locking SELECT sorted on other columns reads the
//     snapshot, sorts, then locks the rows in that order by point scans.
//     UPDATE locks FOR NO KEY UPDATE and writes each row from the version
//     locked: with tx.Update, or, when the primary key changes (a key
//     update), with Delete + Insert after the scan (Delete takes the lock
//     to FOR UPDATE); DELETE locks FOR UPDATE. INSERT ... SELECT ... FOR
//     <strength> locks the rows its SELECT reads as that SELECT alone
//     would, all before the first row is inserted.
//   - A SELECT over one table (or none) without grouping, aggregates,
//     DISTINCT or a set operation is planned by dml.go's selectPlan, which
//     owns row locking; every other SELECT by the general query path
//     (query.go: the plan nodes and the order of evaluation; query_plan.go
//     analysis and name scopes; query_exec.go the operators; agg.go
//     grouping and aggregates; window.go window functions). There a
//     locking clause (FOR <strength> [OF t, ...] [NOWAIT | SKIP LOCKED],
//     on joins and inside subqueries in FROM) is PostgreSQL's LockRows
//     node above the join (lockjoin.go): each joined row's tables named
//     are locked by key, and a row whose locked version is newer than the
//     one joined is rechecked by running the FROM and WHERE subtree again
//     pinned to that row's versions (EvalPlanQual); an ORDER BY the first
//     table's key needs no sort, so a LIMIT stops its scan. It is 0A000,
//     as in PostgreSQL, on the nullable side of an outer join and with
//     GROUP BY, HAVING, DISTINCT, aggregates, window functions, set
//     operations and VALUES; 42P01 for OF naming no FROM item. Over a
//     subquery in FROM that PostgreSQL does not pull up into the join
//     (ORDER BY, LIMIT, … : a LATERAL top N per group) the clause is
//     pushed into the subquery, which locks the rows it returns, as
//     PostgreSQL's does (lateral.go pushLocks); over a simple subquery,
//     which PostgreSQL flattens to lock only its joined rows, it is 0A000.
//     Joins hash on an equality of their two sides (the right side is the
//     one built; an integer key has an open-addressing table of its own,
//     hashjoin.go), else loop; a WHERE conjunct that names one FROM item
//     is pushed into its scan, so keys and indexes still serve. A table
//     scan decodes only the columns the query's column references resolve
//     to (colUse, query_plan.go; the others are NULL in its rows) and a
//     join keeps only those of its inner rows — except under a locking
//     clause, whose LockRows node compares whole rows. The engine lends
//     the scans its stored bytes (ScanOptions.NoCopy): a row is decoded at
//     once and nothing of the bytes is kept past the callback. Subqueries in expressions are planned by it
//     too (conditional.go): a name a subquery does not have resolves in
//     the query around it (a correlated subquery, run per outer row); an
//     uncorrelated one runs once per execution of its statement. A
//     LATERAL subquery in FROM, and any set-returning function there, is
//     planned so with the FROM items to its left as the query around it
//     (lateral.go): its join is a nested loop that runs it per left row,
//     INNER or LEFT (42P10 on the right of a RIGHT or FULL JOIN, as in
//     PostgreSQL; a LATERAL item in a JOIN reading the FROM list's items
//     before that JOIN is 0A000). A subquery in FROM reads the queries
//     around it as one in an expression does. An aggregate whose
//     arguments read only an enclosing query's columns (PostgreSQL's
//     aggregate of that query) is 0A000, 42803 in a LATERAL item.
//   - Any error rolls back the transaction (statements are atomic because
//     transactions are): inside BEGIN the block becomes failed (25P02 until
//     ROLLBACK/COMMIT); outside, the statements of the current group (one
//     Query message, or extended-protocol messages up to Sync) are rolled
//     back together, as PostgreSQL's implicit transaction blocks are.
//   - Whatever is not supported fails with 0A000 naming the construct;
//     nothing is silently ignored. A type or function PostgreSQL does not
//     have either is 42704 / 42883, as PostgreSQL says (pgnames.go).
//   - No text reaches pg_query's C parser before checkText bounded its
//     nesting depth (depth.go): the C code walks the parse tree recursively
//     and would overflow its thread stack, killing the process; deeper than
//     maxExprDepth is 54001. Query text and text parameters are valid UTF-8
//     without NUL (22021).
//   - Values are checked where PostgreSQL checks them: integer overflow in
//     arithmetic, negation, folding and casts (22003), smallint and
//     varchar(n) and character(n) columns at assignment (22003, 22001;
//     a character(n) is blank-padded to n), select and RETURNING
//     lists of at most 1664 entries (54011).
//   - Configuration parameters are known by PostgreSQL 15's list
//     (pgsettings.go, generated from pg_settings by gen_pgsettings.go): an
//     unknown name is 42704, a dotted one a custom placeholder; see
//     pgSetting for the rules.
//   - lock_timeout applies from the next transaction on (it is a
//     TxOptions.LockTimeout); deadlock_timeout is per session, as in
//     PostgreSQL: SET changes it at once, for the waits of the running
//     transaction too (Tx.SetDeadlockTimeout), SHOW reports the session's.
//   - LOCK [TABLE] (locktable.go) locks tables until the transaction ends;
//     DROP TABLE takes AccessExclusiveLock and so waits for the
//     transactions that used the table; pg_locks lists relation locks.
//   - The system catalogs (pg_class, pg_attribute, pg_constraint, ...,
//     information_schema's views) are not stored: a scan of one generates
//     its rows from the catalog at query time, the committed tables with
//     the session's own uncommitted DDL over them, so they are never stale
//     (pgcatalog.go, infoschema.go; their functions and the regclass casts
//     in catfuncs.go). A query naming one takes the general path. OIDs of
//     tables, indexes, sequences and constraints derive from their names,
//     so they are stable without being stored.
//   - Comments (COMMENT ON, comment.go) are fields of their objects'
//     catalog entries (Table, Column, IndexDef, Sequence, an enum type's
//     types.Enum), so they are transactional and go with their objects;
//     pg_description, obj_description and col_description read them.
//   - Temporary tables (temp.go) are the session's, never in the
//     catalog: a session's table over an engine table of its own, looked
//     up before the catalog's names (pg_temp first), dropped at commit
//     (ON COMMIT DROP) or with the session, and by NewExecutor after a
//     crash.
//   - Views (views.go) are catalog entries holding their query's SQL
//     text, expanded where a query names one like a subquery in FROM;
//     the tables and views a view reads cannot be dropped without
//     CASCADE.
//   - Enum types (CREATE TYPE ... AS ENUM, ALTER TYPE ADD VALUE [IF NOT
//     EXISTS] [BEFORE | AFTER], RENAME VALUE, RENAME TO, DROP TYPE;
//     enum.go) are catalog entries like sequences, transactional; each
//     has a types.Type number of its own for the process, so its values
//     and columns are typed like any other's, and its values sort by the
//     type's float4 sort orders (PostgreSQL's); so does its array type.
//     A value ADD VALUE adds is 55P04 until its transaction commits.
//     DROP TYPE ... CASCADE drops the columns of the type as ALTER TABLE
//     ... DROP COLUMN would. A view's column under DROP TYPE ... CASCADE
//     and an ADD VALUE that PostgreSQL would answer by renumbering the
//     sort orders are 0A000.
//   - COPY t [(cols)] FROM STDIN and COPY t [(cols)] | (SELECT ...) TO
//     STDOUT, text, csv and binary (copy.go), run through the connection's
//     CopyIO in the session's transaction: each row is checked by
//     INSERT's own path (insertrow.go) as soon as its line has arrived and
//     inserted with the batch of 64 it belongs to (as PostgreSQL's
//     multi-insert buffer; the batch's index slots are prefetched
//     together, tupled.Tx.Prefetch), so the data is never held whole (the
//     batch's buffers serve the whole statement: the engine copies what it
//     keeps); an error's CONTEXT names the line, a duplicate key's its own
//     row's ("COPY t, line 3, column a: ..."). COPY to or from a server file or
//     program is 0A000.
//   - TRUNCATE (truncate.go) is transactional: ACCESS EXCLUSIVE on each
//     table (as DROP TABLE), the rows deleted through the transaction
//     (referencing tables first), 0A000 for a table referenced from
//     outside the list unless CASCADE; RESTART IDENTITY deletes the
//     sequences in the transaction, whose nextval then runs in it.
package sqlfe
