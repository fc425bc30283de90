package sqlfe

import (
	"context"
	"testing"

	"github.com/tupled/tupled"
)

// BenchmarkJoin100k: a join of two 100k-row tables on a key, the query of
// bench/pg/join-vs-pg.sh (issue 24's join goal), as an aggregate over the
// join and as the join's rows.
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
		b.Run(q.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := run(b, s, q.sql); err != nil {
					b.Fatal(q.sql, err)
				}
			}
		})
	}
}
