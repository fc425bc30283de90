package catalog

import (
	"encoding/binary"
	"encoding/json"
	"sort"
	"strings"

	"github.com/tupled/tupled/sql/types"
)

// Enum types: a definition (types.Enum) is catalog data like a
// sequence's, an entry of CatalogTable under EnumCatalogKey(name), written
// through the DDL's transaction and installed here when it commits
// (ApplyEnums). Its Type number is the process's (types.NewEnumType at
// CREATE TYPE or at Load), so the *types.Enum here and in types' registry
// is one; a column of the type records its OID (Column.Enum), by which
// Load gives the column its Type.

// EnumCatalogKey is the catalog key of enum type name (no table name
// holds a NUL).
func EnumCatalogKey(name string) []byte { return []byte("\x00type\x00" + name) }

func isEnumCatalogKey(k []byte) bool { return strings.HasPrefix(string(k), "\x00type\x00") }

// loadEnum reads an enum type's catalog entry (Load) and registers it.
func (c *Catalog) loadEnum(v []byte) error {
	e := &types.Enum{}
	if err := json.Unmarshal(v, e); err != nil {
		return err
	}
	t, err := types.NewEnumType()
	if err != nil {
		return err
	}
	e.Type = t
	types.NoteEnumOID(e.OID, e.ArrayOID)
	for _, l := range e.Labels {
		types.NoteEnumOID(l.OID)
	}
	types.SetEnum(e)
	if c.enums == nil {
		c.enums = map[string]*types.Enum{}
	}
	c.enums[e.Name] = e
	return nil
}

// fixEnumCols gives the loaded tables' enum columns their types' numbers
// (Load, once every entry is read).
func (c *Catalog) fixEnumCols() {
	byOID := map[uint32]types.Type{}
	for _, e := range c.enums {
		byOID[e.OID] = e.Type
	}
	for _, t := range c.tables {
		for i := range t.Cols {
			if o := t.Cols[i].Enum; o != 0 {
				t.Cols[i].Type = byOID[o]
				if t.Cols[i].EnumArray {
					t.Cols[i].Type, _ = types.ArrayOf(byOID[o])
				}
			}
		}
	}
}

// ApplyEnums installs the enum type DDL of a committed transaction (nil =
// dropped).
func (c *Catalog) ApplyEnums(changes map[string]*types.Enum) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.enums == nil {
		c.enums = map[string]*types.Enum{}
	}
	for name, e := range changes {
		if e == nil {
			delete(c.enums, name)
		} else {
			c.enums[name] = e
		}
	}
	c.gen++
}

// Enum returns the committed enum type name, or nil.
func (c *Catalog) Enum(name string) *types.Enum {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.enums[name]
}

// Enums returns the committed enum types, by name.
func (c *Catalog) Enums() []*types.Enum {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]*types.Enum, 0, len(c.enums))
	for _, e := range c.enums {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// MarshalJSON is a Column's stored form, with Enum and EnumArray set from
// its type (so every table, view and result column of an enum type or of
// its array type reloads as it).
func (c Column) MarshalJSON() ([]byte, error) {
	type plain Column
	p := plain(c)
	p.Enum, p.EnumArray = 0, false
	if e := types.EnumOf(c.Type); e != nil {
		p.Enum = e.OID
	} else if e := types.EnumOf(types.ElemType(c.Type)); c.Type >= types.FirstEnum && e != nil {
		p.Enum, p.EnumArray = e.OID, true
	}
	return json.Marshal(p)
}

// appendEnumArray is the stored form of a value of an enum's array type:
// the number of elements (uvarint), then each element's sort position
// plus one (uvarint; 0 is NULL), so that a RENAME VALUE changes no row.
func appendEnumArray(dst []byte, v types.Value) []byte {
	els, err := types.ArrayElems(v)
	if err != nil {
		els = nil // S is canonical: it always parses
	}
	dst = binary.AppendUvarint(dst, uint64(len(els)))
	for _, e := range els {
		if e.Null {
			dst = binary.AppendUvarint(dst, 0)
		} else {
			dst = binary.AppendUvarint(dst, uint64(e.I)+1)
		}
	}
	return dst
}

// decodeEnumArray reads appendEnumArray's form from p (only steps over it
// if skip): the value and the rest of p.
func decodeEnumArray(t types.Type, p []byte, skip bool) (types.Value, []byte, error) {
	n, k := binary.Uvarint(p)
	if k <= 0 || n > uint64(len(p)) {
		return types.Value{}, nil, ErrCorrupt
	}
	p = p[k:]
	var els []types.Value
	el := types.ElemType(t)
	for j := uint64(0); j < n; j++ {
		x, k := binary.Uvarint(p)
		if k <= 0 {
			return types.Value{}, nil, ErrCorrupt
		}
		p = p[k:]
		if skip {
			continue
		}
		if x == 0 {
			els = append(els, types.Null(el))
			continue
		}
		e, ok := types.EnumByKey(el, int64(x-1))
		if !ok {
			return types.Value{}, nil, ErrCorrupt
		}
		els = append(els, e)
	}
	if skip {
		return types.Null(t), p, nil
	}
	v, err := types.MakeArray(t, els)
	if err != nil {
		return types.Value{}, nil, ErrCorrupt
	}
	return v, p, nil
}
