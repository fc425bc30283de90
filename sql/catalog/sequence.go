package catalog

import (
	"encoding/json"
	"strings"
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
