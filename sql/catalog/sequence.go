package catalog

import (
	"encoding/json"
	"math"
	"strings"

	"github.com/tupled/tupled/sql/types"
)

// Sequence is a sequence's definition.
type Sequence struct {
	Name string `json:"name"`
	// Key is the state row's key in SequenceTable.
	Key   string `json:"key,omitempty"`
	Type  string `json:"type"` // smallint, integer or bigint
	Start int64  `json:"start"`
	Inc   int64  `json:"inc"`
	Min   int64  `json:"min"`
	Max   int64  `json:"max"`
	Cache int64  `json:"cache"`
	Cycle bool   `json:"cycle,omitempty"`
	// OwnedTable and OwnedCol: OWNED BY table.column (a column's own
	// sequence is owned by it too).
	OwnedTable string `json:"owned_table,omitempty"`
	OwnedCol   string `json:"owned_col,omitempty"`
	// Comment is COMMENT ON SEQUENCE's text ("": none).
	Comment string `json:"comment,omitempty"`
}

// SeqTypeRange is a sequence type's OID and bounds (smallint, integer;
// anything else is bigint).
func SeqTypeRange(typ string) (oid int64, min, max int64) {
	switch typ {
	case "smallint":
		return 21, math.MinInt16, math.MaxInt16
	case "integer":
		return 23, math.MinInt32, math.MaxInt32
	}
	return 20, math.MinInt64, math.MaxInt64
}

// ColSeqType is the sequence type of an integer column.
func ColSeqType(c Column) string {
	switch {
	case c.Type == types.TInt8:
		return "bigint"
	case c.Int2:
		return "smallint"
	}
	return "integer"
}

// NewSequence is a sequence of typ with PostgreSQL's defaults.
func NewSequence(name, typ string) *Sequence {
	_, _, max := SeqTypeRange(typ)
	return &Sequence{Name: name, Type: typ, Start: 1, Inc: 1, Min: 1, Max: max, Cache: 1}
}

// SeqName is the name PostgreSQL gives the sequence of t's serial or
// identity column c: t_c_seq.
func SeqName(t *Table, c Column) string { return t.Name + "_" + c.Name + "_seq" }

// ColSequence is the sequence of t's serial or identity column c (nil if
// c has none): c.Seq, or the defaults of its type, named SeqName unless
// named otherwise, keyed engineTable.column and owned by the column.
func ColSequence(t *Table, c Column) *Sequence {
	if !c.Serial && c.Identity == "" {
		return nil
	}
	var sq Sequence
	if c.Seq != nil {
		sq = *c.Seq
	} else {
		sq = *NewSequence("", ColSeqType(c))
	}
	if sq.Name == "" {
		sq.Name = SeqName(t, c)
	}
	sq.Key = t.Engine + "." + c.Name
	sq.OwnedTable, sq.OwnedCol = t.Name, c.Name
	return &sq
}

func isSeqCatalogKey(k []byte) bool { return strings.HasPrefix(string(k), "\x00seq\x00") }

// ApplySeqs installs the sequence DDL of a committed transaction (nil =
// dropped).
func (c *Catalog) ApplySeqs(changes map[string]*Sequence) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seqs == nil {
		c.seqs = map[string]*Sequence{}
	}
	for name, sq := range changes {
		if sq == nil {
			delete(c.seqs, name)
		} else {
			c.seqs[name] = sq
		}
	}
	c.gen++
}

// loadSeq reads a sequence's catalog entry (catalog.load).
func (c *Catalog) loadSeq(v []byte) error {
	var sq Sequence
	if err := json.Unmarshal(v, &sq); err != nil {
		return err
	}
	if c.seqs == nil {
		c.seqs = map[string]*Sequence{}
	}
	c.seqs[sq.Name] = &sq
	return nil
}
