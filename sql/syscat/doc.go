// Package syscat is the system catalogs: the engine's tables, indexes,
// sequences and constraints shown as PostgreSQL's pg_catalog relations
// (pg_class, pg_attribute, pg_type, pg_index, pg_constraint, pg_attrdef,
// pg_description, ...) and information_schema's views (tables, columns,
// table_constraints, key_column_usage, ...), enough for psql's \d family,
// ORMs' schema introspection and JDBC's metadata. It holds the snapshot
// of the catalog as OIDs and objects (Snap, Build), each relation's
// columns and row generator (Relations), a column's PostgreSQL type and
// format_type's names (ColumnType, FormatType, TypeOIDByName), and the
// definitions' text: pg_get_indexdef (Snap.IndexDef),
// pg_get_constraintdef (Snap.ConstraintDef), a default's pg_get_expr
// (DefaultText), the comments (Describe).
//
// Who calls it: sqlfe. Its syscat.go builds the session's Snap (the
// committed catalog with the session's pending DDL over it, cached while
// the catalog's generation is unchanged and there is none), resolves a
// FROM item to a Relation and scans it as a rowsScan of the general
// query path, handing the relation its Session (the user, the database,
// the enum types, the settings, a sequence's state); catfuncs.go's
// format_type, pg_get_indexdef, pg_get_constraintdef, obj_description,
// the reg* casts read the Snap. The CHECK constraints' and partial
// indexes' text is printed by sqlfe's checkdef.go (it needs the parser),
// through the Deparser given to Build. It imports sql/catalog, sql/types
// and sql/eval: never sqlfe, pg_query or the engine.
//
// Invariants:
//   - Nothing is stored and nothing goes stale: every scan generates its
//     rows from the Snap it is given, and a Snap is built from the
//     catalog the session sees, committed tables with its own uncommitted
//     DDL over them, so DDL maintains no catalog row.
//   - OIDs are stable for a catalog generation and beyond: PostgreSQL's
//     fixed objects keep PostgreSQL's OIDs (namespaces pg_catalog 11,
//     public 2200, pg_toast 99, information_schema 13000 (PostgreSQL's is
//     assigned at initdb; tupled fixes one); types pg_type's; the
//     bootstrap superuser 10, which owns everything and is shown under the
//     connected user's name; access methods heap 2 and btree 403;
//     collation default 100); each table, index, sequence and constraint
//     gets an OID derived from its name — FNV-1a of its kind and name,
//     folded into [16384, 2^30+16384) — so an OID is the same in every
//     session, across restarts and across unrelated DDL, without a
//     counter in the catalog. Collisions are resolved by probing upwards
//     in the order of the objects' keys, which is deterministic. A table
//     dropped and created again under its name gets its OID again
//     (PostgreSQL would hand out a new one). The catalog relations
//     themselves have OIDs below 16384 (SystemRelOID).
//   - A Snap is read-only once built and may be shared between sessions.
//   - Types: columns PostgreSQL declares oid or regclass are bigint here
//     (an oid is an unsigned 32-bit number), name and "char" are text,
//     int2vector, oidvector and int2[] are integer[], aclitem[],
//     pg_node_tree and the other arrays text (NULL, or an array literal).
//     Rows and texts are PostgreSQL 15's for the same objects
//     (syscat_test.go holds its answers).
//
// Adding a relation: declare its columns with Columns (name:type, see
// there) in the file of its schema (pgcatalog.go, infoschema.go), write
// its rows as a func(Session, *Snap) [][]types.Value (or none, for a
// catalog of objects tupled does not have), and register it in
// Relations (pg_catalog's in pgcatalog.go's init, information_schema's
// in infoSchemaRelations). sqlfe finds it by name; nothing there changes
// unless the rows need more of the session, which goes into Session.
//
// Files: doc.go; snap.go (the fixed OIDs, Rel, Con, Snap, Build, regclass
// input: RelOID, SystemRelOID); pgcatalog.go (Session, Deparser,
// Relation, Columns, pg_catalog's relations, Relations); types.go
// (pg_type and the enum types' rows, ColumnType, FormatType,
// TypeOIDByName); defs.go (IndexDef, ConstraintDef, DefaultText);
// comment.go (pg_description, Describe); infoschema.go
// (information_schema's views).
package syscat
