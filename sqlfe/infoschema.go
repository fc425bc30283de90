package sqlfe

// information_schema's views, generated like pg_catalog's relations
// (pgcatalog.go) from the catalog at query time. They list the user's
// tables (schema public) only: PostgreSQL's list pg_catalog's and
// information_schema's own views too, which tupled does not describe
// there. PostgreSQL's domains sql_identifier, character_data and yes_or_no
// are text here, cardinal_number is integer.

import "strconv"

var infoSchemaRelations = map[string]*catalogRel{
	"tables": {cols(`table_catalog table_schema table_name table_type self_referencing_column_name
		reference_generation user_defined_type_catalog user_defined_type_schema user_defined_type_name
		is_insertable_into is_typed commit_action`), isTablesRows},
	"columns": {cols(`table_catalog table_schema table_name column_name ordinal_position:i4 column_default
		is_nullable data_type character_maximum_length:i4 character_octet_length:i4 numeric_precision:i4
		numeric_precision_radix:i4 numeric_scale:i4 datetime_precision:i4 interval_type interval_precision:i4
		character_set_catalog character_set_schema character_set_name collation_catalog collation_schema
		collation_name domain_catalog domain_schema domain_name udt_catalog udt_schema udt_name scope_catalog
		scope_schema scope_name maximum_cardinality:i4 dtd_identifier is_self_referencing is_identity
		identity_generation identity_start identity_increment identity_maximum identity_minimum identity_cycle
		is_generated generation_expression is_updatable`), isColumnsRows},
	"table_constraints": {cols(`constraint_catalog constraint_schema constraint_name table_catalog table_schema
		table_name constraint_type is_deferrable initially_deferred enforced nulls_distinct`), isTableConstraintsRows},
	"key_column_usage": {cols(`constraint_catalog constraint_schema constraint_name table_catalog table_schema
		table_name column_name ordinal_position:i4 position_in_unique_constraint:i4`), isKeyColumnUsageRows},
	"referential_constraints": {cols(`constraint_catalog constraint_schema constraint_name unique_constraint_catalog
		unique_constraint_schema unique_constraint_name match_option update_rule delete_rule`), isReferentialRows},
	"constraint_column_usage": {cols(`table_catalog table_schema table_name column_name constraint_catalog
		constraint_schema constraint_name`), isConstraintColumnUsageRows},
	"sequences": {cols(`sequence_catalog sequence_schema sequence_name data_type numeric_precision:i4
		numeric_precision_radix:i4 numeric_scale:i4 start_value minimum_value maximum_value increment cycle_option`), isSequencesRows},
	"schemata": {cols(`catalog_name schema_name schema_owner default_character_set_catalog
		default_character_set_schema default_character_set_name sql_path`), isSchemataRows},
	"views": {cols(`table_catalog table_schema table_name view_definition check_option is_updatable
		is_insertable_into is_trigger_updatable is_trigger_deletable is_trigger_insertable_into`), none},
}

func yesNo(b bool) Value {
	if b {
		return Text("YES")
	}
	return Text("NO")
}

func isTablesRows(s *Session, sn *catSnap) [][]Value {
	var rows [][]Value
	db := s.database()
	for _, t := range sn.tables {
		rows = append(rows, []Value{Text(db), Text("public"), Text(t.Name), Text("BASE TABLE"), nullText, nullText, nullText, nullText, nullText,
			Text("YES"), Text("NO"), nullText})
	}
	return rows
}

func nullInt() Value { return Null(TInt4) }

func intOrNull(ok bool, n int) Value {
	if !ok {
		return nullInt()
	}
	return Int4(int32(n))
}

func isColumnsRows(s *Session, sn *catSnap) [][]Value {
	var rows [][]Value
	db := s.database()
	for _, t := range sn.tables {
		for i, c := range t.Cols {
			if c.Hidden {
				continue
			}
			ti := colType(c)
			def := nullText
			if d := defaultText(t, c); d != "" {
				def = Text(d)
			}
			maxLen, octets := nullInt(), nullInt()
			prec, radix, scale, dtPrec := nullInt(), nullInt(), nullInt(), nullInt()
			switch c.Type {
			case TText, TBpchar:
				maxLen = intOrNull(c.MaxLen > 0, c.MaxLen)
				octets = intOrNull(true, 1073741824)
				if c.MaxLen > 0 {
					octets = Int4(int32(c.MaxLen * 4))
				}
			case TInt4, TInt8:
				prec, radix, scale = Int4(int32(ti.len*8)), Int4(2), Int4(0)
			case TNumeric:
				radix = Int4(10)
				if c.Prec > 0 {
					prec, scale = Int4(int32(c.Prec)), Int4(int32(c.Scale))
				}
			case TFloat8:
				prec, radix = Int4(53), Int4(2)
			case TFloat4:
				prec, radix = Int4(24), Int4(2)
			case TTimestamp, TTimestamptz:
				dtPrec = Int4(6)
			case TDate:
				dtPrec = Int4(0)
			}
			n := attnum(t, i)
			row := []Value{Text(db), Text("public"), Text(t.Name), Text(c.Name), Int4(int32(n)), def,
				yesNo(!(c.NotNull || t.isKeyCol(i))), Text(ti.dataType), maxLen, octets, prec,
				radix, scale, dtPrec, nullText, nullInt(),
				nullText, nullText, nullText, nullText, nullText,
				nullText, nullText, nullText, nullText, Text(db), Text("pg_catalog"), Text(ti.typname), nullText,
				nullText, nullText, nullInt(), Text(strconv.Itoa(n)), Text("NO")}
			row = append(row, identityColumns(t, c)...) // identity.go
			rows = append(rows, append(row, Text("NEVER"), nullText, Text("YES")))
		}
	}
	return rows
}

var constraintTypes = map[string]string{"p": "PRIMARY KEY", "u": "UNIQUE", "f": "FOREIGN KEY", "c": "CHECK"}

func isTableConstraintsRows(s *Session, sn *catSnap) [][]Value {
	var rows [][]Value
	db := s.database()
	for _, c := range sn.cons {
		nd := nullText
		if c.kind == "p" || c.kind == "u" {
			nd = Text("YES")
		}
		rows = append(rows, []Value{Text(db), Text("public"), Text(c.name), Text(db), Text("public"), Text(c.t.Name),
			Text(constraintTypes[c.kind]), Text("NO"), Text("NO"), Text("YES"), nd})
	}
	// PostgreSQL lists each NOT NULL column as a CHECK constraint named
	// <namespace oid>_<table oid>_<attnum>_not_null
	for _, t := range sn.tables {
		for i, col := range t.Cols {
			if col.Hidden || !(col.NotNull || t.isKeyCol(i)) {
				continue
			}
			name := strconv.Itoa(oidNspPublic) + "_" + strconv.FormatInt(sn.tabOID[t.Name], 10) + "_" + strconv.Itoa(attnum(t, i)) + "_not_null"
			rows = append(rows, []Value{Text(db), Text("public"), Text(name), Text(db), Text("public"), Text(t.Name),
				Text("CHECK"), Text("NO"), Text("NO"), Text("YES"), nullText})
		}
	}
	return rows
}

func isKeyColumnUsageRows(s *Session, sn *catSnap) [][]Value {
	var rows [][]Value
	db := s.database()
	for _, c := range sn.cons {
		if c.kind == "c" {
			continue // no key
		}
		for k, col := range c.cols {
			if col < 0 {
				continue
			}
			pos := nullInt()
			if c.kind == "f" && c.ref != nil && c.index != nil && k < len(c.fk.RefCols) {
				for j, rc := range c.index.ix.Cols {
					if rc == c.fk.RefCols[k] {
						pos = Int4(int32(j + 1))
					}
				}
			}
			rows = append(rows, []Value{Text(db), Text("public"), Text(c.name), Text(db), Text("public"), Text(c.t.Name),
				Text(c.t.Cols[col].Name), Int4(int32(k + 1)), pos})
		}
	}
	return rows
}

var ruleNames = map[string]string{"a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"}

func isReferentialRows(s *Session, sn *catSnap) [][]Value {
	var rows [][]Value
	db := s.database()
	for _, c := range sn.cons {
		if c.kind != "f" {
			continue
		}
		uname := nullText
		if c.index != nil {
			uname = Text(c.index.name)
		}
		rows = append(rows, []Value{Text(db), Text("public"), Text(c.name), Text(db), Text("public"), uname,
			Text("NONE"), Text(ruleNames[fkActionCode(c.fk.OnUpdate)]), Text(ruleNames[fkActionCode(c.fk.OnDelete)])})
	}
	return rows
}

func isConstraintColumnUsageRows(s *Session, sn *catSnap) [][]Value {
	var rows [][]Value
	db := s.database()
	for _, c := range sn.cons {
		t, cs := c.t, c.cols
		if c.kind == "f" {
			if c.ref == nil {
				continue
			}
			t, cs = c.ref, c.fk.RefCols
		}
		for _, col := range cs {
			if col >= 0 {
				rows = append(rows, []Value{Text(db), Text("public"), Text(t.Name), Text(t.Cols[col].Name), Text(db), Text("public"), Text(c.name)})
			}
		}
	}
	return rows
}

func isSequencesRows(s *Session, sn *catSnap) [][]Value {
	var rows [][]Value
	db := s.database()
	for _, r := range sn.rels {
		if r.kind != "S" || (r.t != nil && r.seqCol >= 0 && r.t.Cols[r.seqCol].Identity != "") {
			continue // PostgreSQL lists no identity column's sequence here
		}
		sq := r.seq
		typid, _, _ := seqTypeRange(sq.Type)
		prec := map[int64]int32{20: 64, 21: 16, 23: 32}[typid]
		cycle := map[bool]string{true: "YES", false: "NO"}[sq.Cycle]
		rows = append(rows, []Value{Text(db), Text("public"), Text(r.name), Text(sq.Type), Int4(prec), Int4(2), Int4(0),
			Text(strconv.FormatInt(sq.Start, 10)), Text(strconv.FormatInt(sq.Min, 10)), Text(strconv.FormatInt(sq.Max, 10)), Text(strconv.FormatInt(sq.Inc, 10)), Text(cycle)})
	}
	return rows
}

func isSchemataRows(s *Session, _ *catSnap) [][]Value {
	db := s.database()
	row := func(name, owner string) []Value {
		return []Value{Text(db), Text(name), Text(owner), nullText, nullText, nullText, nullText}
	}
	return [][]Value{row("information_schema", s.user), row("pg_catalog", s.user), row("pg_toast", s.user), row("public", "pg_database_owner")}
}
