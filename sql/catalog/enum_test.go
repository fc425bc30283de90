package catalog

import (
	"encoding/json"
	"testing"

	"github.com/tupled/tupled/sql/types"
)

// TestEnumColumnsReload: a column of an enum type and one of its array
// type are stored by the enum's OID, and a catalog loaded in another
// process (where the enum has another Type number) maps them back to it.
func TestEnumColumnsReload(t *testing.T) {
	typ, err := types.NewEnumType()
	if err != nil {
		t.Fatal(err)
	}
	oid := types.NewEnumOIDs(2)
	e := &types.Enum{Type: typ, Name: "mood", OID: oid, ArrayOID: oid + 1, Labels: []types.EnumLabel{{Label: "a", Sort: 1}}}
	types.SetEnum(e)
	at, _ := types.ArrayOf(typ)
	tab := Table{Name: "t", Cols: []Column{{Name: "m", Type: typ}, {Name: "ms", Type: at}, {Name: "x", Type: types.TText}}}
	data, err := json.Marshal(&tab)
	if err != nil {
		t.Fatal(err)
	}
	var back Table
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if c := back.Cols; c[0].Enum != oid || c[0].EnumArray || c[1].Enum != oid || !c[1].EnumArray || c[2].Enum != 0 {
		t.Fatalf("stored columns: %s", data)
	}
	// "another process": the enum loads with a Type number of its own
	typ2, _ := types.NewEnumType()
	e2 := *e
	e2.Type = typ2
	types.SetEnum(&e2)
	c := &Catalog{tables: map[string]*Table{"t": &back}, enums: map[string]*types.Enum{"mood": &e2}}
	c.fixEnumCols()
	at2, _ := types.ArrayOf(typ2)
	if back.Cols[0].Type != typ2 || back.Cols[1].Type != at2 || back.Cols[2].Type != types.TText {
		t.Fatalf("reloaded column types: %v", back.Cols)
	}
}
