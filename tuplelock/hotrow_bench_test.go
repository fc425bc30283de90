package tuplelock

import (
	"context"
	"testing"
	"time"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/tuplemode"
	"github.com/tupled/tupled/internal/xact"
	"github.com/tupled/tupled/lockmgr"
	"github.com/tupled/tupled/multixact"
)

// BenchmarkHotRowKeyShare is the hot-row step on one goroutine: a window of
// n running transactions each hold FOR KEY SHARE on one row; per iteration
// the oldest commits and a new one locks the row (the steady state of
// `tupled bench hotrow -c n`, without the scheduler).
func BenchmarkHotRowKeyShare(b *testing.B) {
	for _, n := range []int{2, 30} {
		b.Run(map[int]string{2: "window=2", 30: "window=30"}[n], func(b *testing.B) {
			x := xact.NewManager()
			ms := multixact.NewStore()
			h := heap.New(x, ms, nil)
			lm, err := lockmgr.New(lockmgr.Options{DeadlockTimeout: time.Second})
			if err != nil {
				b.Fatal(err)
			}
			defer lm.Close()
			e := NewLocker(h, x, ms, lm, false)
			tbl, err := h.CreateTable("t")
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			begin := func() *Txn {
				xx := x.Begin()
				return func() *Txn { t := NewTxn(xx, lm.NewProc(xx.ID()), 0); return &t }()
			}
			ins := begin()
			if err := e.Insert(ctx, ins, tbl, []byte("k"), []byte("v")); err != nil {
				b.Fatal(err)
			}
			x.Commit(ins.x)
			row := tbl.Row([]byte("k"))
			row.Lock()
			tup := row.Versions()[0]
			row.Unlock()
			window := make([]*Txn, 0, n)
			lock := func() {
				tx := begin()
				if res, err := e.LockTuple(ctx, tx, tbl, row, tup, tuplemode.KeyShare, Block, true); err != nil || res != heap.TMOk {
					b.Fatal(res, err)
				}
				window = append(window, tx)
			}
			for range n {
				lock()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				x.Commit(window[0].x)
				window = append(window[:0], window[1:]...)
				lock()
			}
			b.StopTimer()
			for _, tx := range window {
				x.Commit(tx.x)
			}
		})
	}
}
