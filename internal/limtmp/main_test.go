package lim

import (
	"context"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/tupled/tupled"
)

func TestBigValue(t *testing.T) {
	bg := context.Background()
	be := tupled.Pebble
	if os.Getenv("BE") == "bbolt" {
		be = tupled.Bbolt
	}
	dir := t.TempDir()
	opts := &tupled.Options{Backend: be, VacuumInterval: -1}
	t0 := time.Now()
	lap := func(what string) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		t.Logf("%-20s %8v heap=%dMiB sys=%dMiB", what, time.Since(t0).Round(time.Millisecond), ms.HeapAlloc>>20, ms.Sys>>20)
		t0 = time.Now()
	}
	db, err := tupled.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	db.CreateTable(bg, "t")
	v := make([]byte, tupled.MaxValueSize)
	v[0] = 1
	lap("open")
	tx, _ := db.Begin(bg, nil)
	if err := tx.Insert(bg, "t", []byte("big"), v); err != nil {
		t.Fatal(err)
	}
	lap("insert")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	lap("commit")
	if err := db.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	lap("checkpoint")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	lap("close")
	db, err = tupled.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	lap("reopen")
	tx, _ = db.Begin(bg, nil)
	got, err := tx.Get(bg, "t", []byte("big"))
	if err != nil || len(got) != len(v) {
		t.Fatal(err)
	}
	lap("get")
	tx.Commit()
	db.Close()
	lap("close2")
}
