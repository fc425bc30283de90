// Package catalog is the SQL layer's catalog: the definitions of SQL
// tables (Table, Column, IndexDef, FKDef, CheckDef; their comments are
// fields of these), views (a Table whose
// View holds its query's SQL text: no engine table, no key) and
// standalone sequences (Sequence), their persistence in the engine table
// CatalogTable, the committed catalog in memory (Catalog), the engine
// tables it owns (NewEngineTable, Settle: creating and reclaiming them),
// and the encodings of a table's rows in its engine table (AppendKey,
// RowKey, EncodeRow, DecodeRow, DecodeRowCols — some columns only —,
// DecodeKey, DecodeRowKey).
//
// Who calls it: sqlfe, which plans DDL against it, writes catalog rows
// through the session's transaction, applies them here when that
// transaction commits (Apply, ApplySeqs), encodes and decodes rows with
// it, and generates pg_catalog and information_schema from its
// definitions; pgwire only for Column (a result column's description).
// It imports sql/types and the engine's API (tupled), never sqlfe or
// pg_query: a definition holds SQL text (a CHECK's or an expression
// index's), never a parse tree or a compiled expression, and declaring
// indexes and foreign keys with the engine, whose key functions and
// actions evaluate such expressions, is sqlfe's (Executor.declareConstraints).
//
// Invariants:
//   - The catalog lives in the engine table "_tupled_catalog" (SQL table
//     name → JSON Table; a standalone sequence under "\x00seq\x00" + name)
//     and, committed, in a Catalog. DDL is transactional: the catalog row
//     is written through the DDL's transaction, and the Catalog changes
//     (Apply) only when that transaction commits; its generation then
//     advances, so prepared statements re-plan. A *Table or *Sequence the
//     Catalog hands out is never modified: a change installs a new one.
//   - The engine table of a dropped SQL table (or of a rolled-back CREATE)
//     is dropped with tupled.DB.DropTable once that transaction is over;
//     one another transaction still uses (55006) is retried at the next
//     DDL (reclaim.go). A new table gets the engine table of its own name
//     if free, else name#2, name#3, ...
//   - Every table has a primary key: one declared, of one column or of
//     several (Table.KeyCols), or, for a table declared without one, a
//     hidden bigint rowid no SQL name reaches (Table.AddHiddenKey). The
//     engine key is its order-preserving encoding: the package keys tuple
//     of the key columns' values, in key order (text its bytes — C
//     collation —, character(n) without trailing spaces), or, for tables
//     made before package keys, the raw format of one column (KeyFormatRaw,
//     AppendKey). So key ranges are tx.Scan ranges, the leading columns'
//     tuple is a prefix of the keys it begins, and 'ab' and 'ab  ' are one
//     character(n) key. In the typed format of tables made since it exists
//     (KeyFormatTyped), dates, timestamps, floats, numeric and interval
//     are keys too, by their ordered forms (types' keyenc.go), where 1.5
//     and 1.50, -0 and 0, '1 day' and '24 hours' are one key; older tables
//     keep their format, where those types cannot be keys (KeyTypeOK). The
//     value is the other columns: a NULL bitmap, then each non-NULL column
//     (numeric and timestamp as their text form), then the text of the key
//     columns whose key does not give it back (keyTextCols). A stored row
//     that does not decode is ErrCorrupt (XX001), never a panic.
//   - Enum types' definitions (types.Enum) are catalog entries under
//     "\x00type\x00" + name, installed by ApplyEnums at commit; Load
//     gives each a Type number and maps enum columns back to it by the
//     OID they record (Column.Enum, enum.go). An enum value is a key by
//     its sort position (KeyFormatTyped) and stored as it (4 bytes); an
//     array of one as its elements' positions (so RENAME VALUE rewrites
//     no row).
//   - The JSON field names of Table and Column, and the numbers of
//     types.Type and KeyFormat, are the stored format: they are only ever
//     added to.
//
// Files: table.go (Column, Table, KeyFormat), constraints.go (IndexDef,
// FKDef, CheckDef and the engine names of indexes and foreign keys),
// sequence.go (Sequence; a serial or identity column's own: ColSequence, with PostgreSQL's defaults: NewSequence), enum.go (enum types), catalog.go (Catalog: Load, Apply, lookups),
// reclaim.go (engine tables made and dropped), rowcodec.go (keys and
// rows).
package catalog
