package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Ingester is a backend that can take a run of new keys past its write
// path: pebble writes them into an sstable of their own and ingests it,
// so they skip pebble's WAL, the memtable and its flush, and a key range
// no other table overlaps goes straight to the bottom level without a
// compaction. A bulk load (heap's "Bulk loads") uses it for keys above
// every key the table holds.
type Ingester interface {
	// Ingest adds keys[i] → values[i]; keys strictly increasing and none
	// of them in the backend. When it returns nil the pairs are visible
	// and durable. An error other than one about the input is fatal, as
	// Commit's.
	Ingest(keys, values [][]byte) error
}

var ingestSeq atomic.Uint64

// Ingest implements Ingester.
func (p *pebbleBackend) Ingest(keys, values [][]byte) (err error) {
	if len(keys) != len(values) {
		return errors.New("storage: ingest: as many values as keys")
	}
	for i := range keys {
		if err := validKey(keys[i]); err != nil {
			return err
		}
		if err := validValue(values[i]); err != nil {
			return err
		}
		if i > 0 && bytes.Compare(keys[i-1], keys[i]) >= 0 {
			return errors.New("storage: ingest: keys not strictly increasing")
		}
	}
	if len(keys) == 0 {
		return nil
	}
	if err := p.g.enter(); err != nil {
		return err
	}
	defer p.g.exit()
	if err := p.fail.get(); err != nil {
		return err
	}
	defer p.recoverFailure(&err)
	path := p.fs.PathJoin(p.dir, fmt.Sprintf("tupled-ingest-%d.tmp", ingestSeq.Add(1)))
	f, err := p.fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return p.fail.set(fmt.Errorf("pebble ingest: %w", err))
	}
	w := sstable.NewWriter(objstorageprovider.NewFileWritable(f), p.opts.MakeWriterOptions(6, p.db.TableFormat()))
	for i := range keys {
		if err := w.Set(keys[i], values[i]); err != nil {
			_ = w.Close()
			_ = p.fs.Remove(path)
			return p.fail.set(fmt.Errorf("pebble ingest: %w", err))
		}
	}
	if err := w.Close(); err != nil { // syncs the file
		_ = p.fs.Remove(path)
		return p.fail.set(fmt.Errorf("pebble ingest: %w", err))
	}
	ierr := p.db.Ingest(context.Background(), []string{path})
	_ = p.fs.Remove(path) // ingested by a link of its own
	if ierr != nil {
		return p.fail.set(fmt.Errorf("pebble ingest: %w", ierr))
	}
	p.ctr.committed(0, true)
	return nil
}

// Ingest implements Ingester when the backend under the checksums does:
// each value is sealed as Set seals it.
func (c *checkedBackend) Ingest(keys, values [][]byte) error {
	ing, ok := c.inner.(Ingester)
	if !ok {
		return errors.New("storage: ingest: the backend cannot ingest")
	}
	sealed := make([][]byte, len(values))
	size := 0
	for _, v := range values {
		if len(v) > MaxValueSize-SealOverhead {
			return fmt.Errorf("storage: ingest: value of %d bytes too large", len(v))
		}
		size += SealOverhead + len(v)
	}
	// one buffer of the exact size, each value sealed in place (no
	// allocation, and no copy into a growing buffer, per value)
	buf := make([]byte, size)
	at := 0
	for i, v := range values {
		b := buf[at : at+SealOverhead+len(v) : at+SealOverhead+len(v)]
		sealInto(b, keys[i], v)
		sealed[i] = b
		at += len(b)
	}
	return ing.Ingest(keys, sealed)
}

// CanIngest reports whether be takes Ingest.
func CanIngest(be Backend) bool {
	if c, ok := be.(*checkedBackend); ok {
		be = c.inner
	}
	_, ok := be.(Ingester)
	return ok
}
