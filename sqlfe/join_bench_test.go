package sqlfe

import (
	"context"
	"testing"

	"github.com/tupled/tupled"
)

// BenchmarkJoin100k: a join of two 100k-row tables on a key, the query of
// bench/pg/join-vs-pg.sh (issue 24's join goal), as an aggregate over the
// join and as the join's rows (each encoded as text, as pgwire sends it).
// cpu-ns/op, the process's CPU time per query, is steadier than ns/op on a
// machine shared with other work.
func BenchmarkJoin100k(b *testing.B) {
	b.Run("mem", func(b *testing.B) { _, s := newTestSession(b); benchJoin(b, s) })
	b.Run("disk", func(b *testing.B) {
		db, err := tupled.Open(b.TempDir(), &tupled.Options{VacuumInterval: -1})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		ex, err := NewExecutor(context.Background(), db, nil)
		if err != nil {
			b.Fatal(err)
		}
		s := ex.NewSession(1, "test", nil)
		b.Cleanup(s.Close)
		benchJoin(b, s)
	})
}

func benchJoin(b *testing.B, s *Session) {
	for _, q := range []string{
		"CREATE TABLE ja (id int PRIMARY KEY, v int, pad text)",
		"CREATE TABLE jb (id int PRIMARY KEY, a_id int, w int)",
		"INSERT INTO ja SELECT i, i % 1000, 'pad' || i FROM generate_series(1, 100000) i",
		"INSERT INTO jb SELECT i, (i * 7919) % 100000 + 1, i % 100 FROM generate_series(1, 100000) i",
	} {
		if _, err := run(b, s, q); err != nil {
			b.Fatal(q, err)
		}
	}
	for _, q := range []struct{ name, sql string }{
		{"agg", "SELECT count(*), sum(ja.v + jb.w) FROM ja JOIN jb ON ja.id = jb.a_id"},
		{"rows", "SELECT ja.id, ja.v, jb.w FROM ja JOIN jb ON ja.id = jb.a_id"},
	} {
		st, err := Parse(q.sql)
		if err != nil {
			b.Fatal(q.sql, err)
		}
		b.Run(q.name, func(b *testing.B) {
			var buf []byte
			cpu0, cpuOK := processCPU()
			for i := 0; i < b.N; i++ {
				res, err := s.Execute(context.Background(), st[0], nil)
				if err != nil {
					b.Fatal(q.sql, err)
				}
				// the rows' text, as pgwire's sendRows encodes them
				for _, r := range res.Rows {
					buf = buf[:0]
					for _, v := range r {
						buf = v.AppendText(buf)
					}
				}
				if err := s.EndGroup(); err != nil {
					b.Fatal(err)
				}
			}
			if cpu1, ok := processCPU(); ok && cpuOK {
				b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
