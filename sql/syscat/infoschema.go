package syscat

// information_schema's views, generated like pg_catalog's relations
// (pgcatalog.go) from the catalog at query time. They list the user's
// tables (schema public) only: PostgreSQL's list pg_catalog's and
// information_schema's own views too, which tupled does not describe
// there. PostgreSQL's domains sql_identifier, character_data and yes_or_no
// are text here, cardinal_number is integer.

import (
	"strconv"

	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/types"
)

var infoSchemaRelations = map[string]*Relation{
	"tables": {Columns(`table_catalog table_schema table_name table_type self_referencing_column_name
		reference_generation user_defined_type_catalog user_defined_type_schema user_defined_type_name
		is_insertable_into is_typed commit_action`), isTablesRows},
	"columns": {Columns(`table_catalog table_schema table_name column_name ordinal_position:i4 column_default
		is_nullable data_type character_maximum_length:i4 character_octet_length:i4 numeric_precision:i4
		numeric_precision_radix:i4 numeric_scale:i4 datetime_precision:i4 interval_type interval_precision:i4
		character_set_catalog character_set_schema character_set_name collation_catalog collation_schema
		collation_name domain_catalog domain_schema domain_name udt_catalog udt_schema udt_name scope_catalog
		scope_schema scope_name maximum_cardinality:i4 dtd_identifier is_self_referencing is_identity
		identity_generation identity_start identity_increment identity_maximum identity_minimum identity_cycle
		is_generated generation_expression is_updatable`), isColumnsRows},
	"table_constraints": {Columns(`constraint_catalog constraint_schema constraint_name table_catalog table_schema
		table_name constraint_type is_deferrable initially_deferred enforced nulls_distinct`), isTableConstraintsRows},
	"key_column_usage": {Columns(`constraint_catalog constraint_schema constraint_name table_catalog table_schema
		table_name column_name ordinal_position:i4 position_in_unique_constraint:i4`), isKeyColumnUsageRows},
	"referential_constraints": {Columns(`constraint_catalog constraint_schema constraint_name unique_constraint_catalog
		unique_constraint_schema unique_constraint_name match_option update_rule delete_rule`), isReferentialRows},
	"constraint_column_usage": {Columns(`table_catalog table_schema table_name column_name constraint_catalog
		constraint_schema constraint_name`), isConstraintColumnUsageRows},
	"sequences": {Columns(`sequence_catalog sequence_schema sequence_name data_type numeric_precision:i4
		numeric_precision_radix:i4 numeric_scale:i4 start_value minimum_value maximum_value increment cycle_option`), isSequencesRows},
	"schemata": {Columns(`catalog_name schema_name schema_owner default_character_set_catalog
		default_character_set_schema default_character_set_name sql_path`), isSchemataRows},
	"views": {Columns(`table_catalog table_schema table_name view_definition check_option is_updatable
		is_insertable_into is_trigger_updatable is_trigger_deletable is_trigger_insertable_into`), isViewsRows},
}

func yesNo(b bool) types.Value {
	if b {
		return types.Text("YES")
	}
	return types.Text("NO")
}

func isTablesRows(s Session, sn *Snap) [][]types.Value {
	var rows [][]types.Value
	db := s.Database()
	for _, t := range sn.Tables {
		rows = append(rows, []types.Value{types.Text(db), types.Text("public"), types.Text(t.Name), types.Text("BASE TABLE"), nullText, nullText, nullText, nullText, nullText,
			types.Text("YES"), types.Text("NO"), nullText})
	}
	for _, v := range sn.Views { // not insertable: tupled writes no view (sqlfe's views.go)
		rows = append(rows, []types.Value{types.Text(db), types.Text("public"), types.Text(v.Name), types.Text("VIEW"), nullText, nullText, nullText, nullText, nullText,
			types.Text("NO"), types.Text("NO"), nullText})
	}
	return rows
}

func isViewsRows(s Session, sn *Snap) [][]types.Value {
	var rows [][]types.Value
	db := s.Database()
	for _, v := range sn.Views {
		rows = append(rows, []types.Value{types.Text(db), types.Text("public"), types.Text(v.Name), types.Text(v.View), types.Text("NONE"), types.Text("NO"),
			types.Text("NO"), types.Text("NO"), types.Text("NO"), types.Text("NO")})
	}
	return rows
}

func nullInt() types.Value { return types.Null(types.TInt4) }

func intOrNull(ok bool, n int) types.Value {
	if !ok {
		return nullInt()
	}
	return types.Int4(int32(n))
}

func isColumnsRows(s Session, sn *Snap) [][]types.Value {
	var rows [][]types.Value
	db := s.Database()
	for _, t := range append(append([]*catalog.Table(nil), sn.Tables...), sn.Views...) {
		for i, c := range t.Cols {
			if c.Hidden {
				continue
			}
			ti := ColumnType(c)
			def := nullText
			if d := DefaultText(t, c); d != "" {
				def = types.Text(d)
			}
			maxLen, octets := nullInt(), nullInt()
			prec, radix, scale, dtPrec, ivType := nullInt(), nullInt(), nullInt(), nullInt(), nullText
			switch c.Type {
			case types.TText, types.TBpchar:
				maxLen = intOrNull(c.MaxLen > 0, c.MaxLen)
				octets = intOrNull(true, 1073741824)
				if c.MaxLen > 0 {
					octets = types.Int4(int32(c.MaxLen * 4))
				}
			case types.TInt4, types.TInt8:
				prec, radix, scale = types.Int4(int32(ti.Len*8)), types.Int4(2), types.Int4(0)
			case types.TNumeric:
				radix = types.Int4(10)
				if c.Prec > 0 {
					prec, scale = types.Int4(int32(c.Prec)), types.Int4(int32(c.Scale))
				}
			case types.TFloat8:
				prec, radix = types.Int4(53), types.Int4(2)
			case types.TFloat4:
				prec, radix = types.Int4(24), types.Int4(2)
			case types.TTimestamp, types.TTimestamptz:
				dtPrec = types.Int4(6)
			case types.TDate:
				dtPrec = types.Int4(0)
			case types.TInterval: // _pg_datetime_precision, _pg_interval_type
				dtPrec = types.Int4(6)
				if p := c.Prec & 0xFFFF; c.Prec > 0 && p != types.IntervalFullPrecision {
					dtPrec = types.Int4(int32(p))
				}
				if f := types.IntervalFields(c.Prec); f != "" {
					ivType = types.Text(f)
				}
			}
			n := AttNum(t, i)
			row := []types.Value{types.Text(db), types.Text("public"), types.Text(t.Name), types.Text(c.Name), types.Int4(int32(n)), def,
				yesNo(!(c.NotNull || t.IsKeyCol(i))), types.Text(ti.DataType), maxLen, octets, prec,
				radix, scale, dtPrec, ivType, nullInt(),
				nullText, nullText, nullText, nullText, nullText,
				nullText, nullText, nullText, nullText, types.Text(db), types.Text(udtSchema(c.Type)), types.Text(ti.Typname), nullText,
				nullText, nullText, nullInt(), types.Text(strconv.Itoa(n)), types.Text("NO")}
			row = append(row, identityColumns(t, c)...) // below
			rows = append(rows, append(row, types.Text("NEVER"), nullText, yesNo(!t.IsView())))
		}
	}
	return rows
}

var constraintTypes = map[string]string{"p": "PRIMARY KEY", "u": "UNIQUE", "f": "FOREIGN KEY", "c": "CHECK"}

func isTableConstraintsRows(s Session, sn *Snap) [][]types.Value {
	var rows [][]types.Value
	db := s.Database()
	for _, c := range sn.Cons {
		nd := nullText
		if c.Kind == "p" || c.Kind == "u" {
			nd = types.Text("YES")
		}
		rows = append(rows, []types.Value{types.Text(db), types.Text("public"), types.Text(c.Name), types.Text(db), types.Text("public"), types.Text(c.Table.Name),
			types.Text(constraintTypes[c.Kind]), types.Text("NO"), types.Text("NO"), types.Text("YES"), nd})
	}
	// PostgreSQL lists each NOT NULL column as a CHECK constraint named
	// <namespace oid>_<table oid>_<attnum>_not_null
	for _, t := range sn.Tables {
		for i, col := range t.Cols {
			if col.Hidden || !(col.NotNull || t.IsKeyCol(i)) {
				continue
			}
			name := strconv.Itoa(OIDNspPublic) + "_" + strconv.FormatInt(sn.TableOID[t.Name], 10) + "_" + strconv.Itoa(AttNum(t, i)) + "_not_null"
			rows = append(rows, []types.Value{types.Text(db), types.Text("public"), types.Text(name), types.Text(db), types.Text("public"), types.Text(t.Name),
				types.Text("CHECK"), types.Text("NO"), types.Text("NO"), types.Text("YES"), nullText})
		}
	}
	return rows
}

func isKeyColumnUsageRows(s Session, sn *Snap) [][]types.Value {
	var rows [][]types.Value
	db := s.Database()
	for _, c := range sn.Cons {
		if c.Kind == "c" {
			continue // no key
		}
		for k, col := range c.Cols {
			if col < 0 {
				continue
			}
			pos := nullInt()
			if c.Kind == "f" && c.Ref != nil && c.Index != nil && k < len(c.FK.RefCols) {
				for j, rc := range c.Index.Index.Cols {
					if rc == c.FK.RefCols[k] {
						pos = types.Int4(int32(j + 1))
					}
				}
			}
			rows = append(rows, []types.Value{types.Text(db), types.Text("public"), types.Text(c.Name), types.Text(db), types.Text("public"), types.Text(c.Table.Name),
				types.Text(c.Table.Cols[col].Name), types.Int4(int32(k + 1)), pos})
		}
	}
	return rows
}

var ruleNames = map[string]string{"a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"}

func isReferentialRows(s Session, sn *Snap) [][]types.Value {
	var rows [][]types.Value
	db := s.Database()
	for _, c := range sn.Cons {
		if c.Kind != "f" {
			continue
		}
		uname := nullText
		if c.Index != nil {
			uname = types.Text(c.Index.Name)
		}
		rows = append(rows, []types.Value{types.Text(db), types.Text("public"), types.Text(c.Name), types.Text(db), types.Text("public"), uname,
			types.Text("NONE"), types.Text(ruleNames[fkActionCode(c.FK.OnUpdate)]), types.Text(ruleNames[fkActionCode(c.FK.OnDelete)])})
	}
	return rows
}

func isConstraintColumnUsageRows(s Session, sn *Snap) [][]types.Value {
	var rows [][]types.Value
	db := s.Database()
	for _, c := range sn.Cons {
		t, cs := c.Table, c.Cols
		if c.Kind == "f" {
			if c.Ref == nil {
				continue
			}
			t, cs = c.Ref, c.FK.RefCols
		}
		for _, col := range cs {
			if col >= 0 {
				rows = append(rows, []types.Value{types.Text(db), types.Text("public"), types.Text(t.Name), types.Text(t.Cols[col].Name), types.Text(db), types.Text("public"), types.Text(c.Name)})
			}
		}
	}
	return rows
}

func isSequencesRows(s Session, sn *Snap) [][]types.Value {
	var rows [][]types.Value
	db := s.Database()
	for _, r := range sn.Rels {
		if r.Kind != "S" || (r.Table != nil && r.SeqCol >= 0 && r.Table.Cols[r.SeqCol].Identity != "") {
			continue // PostgreSQL lists no identity column's sequence here
		}
		sq := r.Seq
		typid, _, _ := catalog.SeqTypeRange(sq.Type)
		prec := map[int64]int32{20: 64, 21: 16, 23: 32}[typid]
		cycle := map[bool]string{true: "YES", false: "NO"}[sq.Cycle]
		rows = append(rows, []types.Value{types.Text(db), types.Text("public"), types.Text(r.Name), types.Text(sq.Type), types.Int4(prec), types.Int4(2), types.Int4(0),
			types.Text(strconv.FormatInt(sq.Start, 10)), types.Text(strconv.FormatInt(sq.Min, 10)), types.Text(strconv.FormatInt(sq.Max, 10)), types.Text(strconv.FormatInt(sq.Inc, 10)), types.Text(cycle)})
	}
	return rows
}

func isSchemataRows(s Session, _ *Snap) [][]types.Value {
	db := s.Database()
	row := func(name, owner string) []types.Value {
		return []types.Value{types.Text(db), types.Text(name), types.Text(owner), nullText, nullText, nullText, nullText}
	}
	return [][]types.Value{row("information_schema", s.User()), row("pg_catalog", s.User()), row("pg_toast", s.User()), row("public", "pg_database_owner")}
}

// identityColumns are information_schema.columns' is_identity through
// identity_cycle for column c of t.
func identityColumns(t *catalog.Table, c catalog.Column) []types.Value {
	if c.Identity == "" {
		return []types.Value{types.Text("NO"), nullText, nullText, nullText, nullText, nullText, types.Text("NO")}
	}
	sq := catalog.ColSequence(t, c)
	gen := map[string]string{"a": "ALWAYS", "d": "BY DEFAULT"}[c.Identity]
	itoa := func(v int64) types.Value { return types.Text(strconv.FormatInt(v, 10)) }
	return []types.Value{types.Text("YES"), types.Text(gen), itoa(sq.Start), itoa(sq.Inc), itoa(sq.Max), itoa(sq.Min), yesNo(sq.Cycle)}
}
