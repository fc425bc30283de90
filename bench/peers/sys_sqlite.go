package main

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"

	_ "modernc.org/sqlite"
)

// sqliteSys is SQLite (modernc.org/sqlite, pure Go) in WAL mode with
// synchronous=FULL: each commit fsyncs the WAL before it returns. SQLite
// has no row locks. "FOR SHARE" reads are one deferred read transaction
// (a WAL snapshot; no writer blocks it, and it blocks no writer). Every
// writing transaction is BEGIN IMMEDIATE (it takes the database's write
// lock at BEGIN) on a pool of one writer connection, the usual Go pattern:
// writers queue in database/sql rather than in SQLite's busy handler, which
// sleeps. A claim is SELECT ... WHERE status = 'todo' ORDER BY id LIMIT 1
// then DELETE and INSERT into done: with one writer at a time no one else
// can hold a job, so SKIP LOCKED has nothing to skip.
type sqliteSys struct {
	rdb, wdb *sql.DB
	// Prepared once; a transaction uses them through Tx.StmtContext,
	// which reuses the statement already prepared on its connection.
	getKV, firstJob, delJob, addDone, move, insW *sql.Stmt
}

// sqliteReaders is how many read connections are opened in advance (at
// least the clients of a default run).
const sqliteReaders = 32

func openSQLite(dir string) (system, error) {
	path := filepath.Join(dir, "sqlite.db")
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(30000)"
	wdb, err := sql.Open("sqlite", dsn+"&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	wdb.SetMaxOpenConns(1)
	rdb, err := sql.Open("sqlite", dsn)
	if err != nil {
		wdb.Close()
		return nil, err
	}
	// Open the readers' connections now, not inside the measured
	// interval (each runs the pragmas and takes the WAL's shared memory).
	rdb.SetMaxIdleConns(sqliteReaders)
	var conns []*sql.Conn
	for range sqliteReaders {
		c, err := rdb.Conn(context.Background())
		if err != nil {
			break
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Close()
	}
	s := &sqliteSys{rdb: rdb, wdb: wdb}
	for _, q := range []string{
		`CREATE TABLE IF NOT EXISTS kv (id INTEGER PRIMARY KEY, v BLOB NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS accounts (id INTEGER PRIMARY KEY, bal INTEGER NOT NULL, filler BLOB)`,
		`CREATE TABLE IF NOT EXISTS jobs (id INTEGER PRIMARY KEY, status TEXT NOT NULL, payload BLOB)`,
		`CREATE TABLE IF NOT EXISTS done (seq INTEGER PRIMARY KEY, job INTEGER NOT NULL, worker INTEGER NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS w (id INTEGER PRIMARY KEY, v BLOB NOT NULL)`,
	} {
		if _, err := wdb.Exec(q); err != nil {
			s.close()
			return nil, err
		}
	}
	for _, p := range []struct {
		db  *sql.DB
		st  **sql.Stmt
		sql string
	}{
		{rdb, &s.getKV, `SELECT v FROM kv WHERE id = ?`},
		{wdb, &s.firstJob, `SELECT id FROM jobs WHERE status = 'todo' ORDER BY id LIMIT 1`},
		{wdb, &s.delJob, `DELETE FROM jobs WHERE id = ?`},
		{wdb, &s.addDone, `INSERT INTO done (job, worker) VALUES (?, ?)`},
		{wdb, &s.move, `UPDATE accounts SET bal = bal + ? WHERE id = ?`},
		{wdb, &s.insW, `INSERT INTO w (id, v) VALUES (?, ?)`},
	} {
		if *p.st, err = p.db.Prepare(p.sql); err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

// update runs fn in one BEGIN IMMEDIATE transaction and commits it.
func (s *sqliteSys) update(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func (s *sqliteSys) load(ctx context.Context, insert string, n int, args func(i uint64) []any) error {
	for lo := 0; lo < n; lo += loadBatch {
		err := s.update(ctx, func(tx *sql.Tx) error {
			st, err := tx.PrepareContext(ctx, insert)
			if err != nil {
				return err
			}
			defer st.Close()
			for i := lo; i < min(lo+loadBatch, n); i++ {
				if _, err := st.ExecContext(ctx, args(uint64(i))...); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *sqliteSys) loadKV(ctx context.Context, rows, valueSize int) error {
	return s.load(ctx, `INSERT INTO kv (id, v) VALUES (?, ?)`, rows, func(i uint64) []any {
		return []any{int64(i), kvValue(i, valueSize)}
	})
}

func (s *sqliteSys) loadAccounts(ctx context.Context, n int, balance int64) error {
	filler := accountValue(0)[8:]
	return s.load(ctx, `INSERT INTO accounts (id, bal, filler) VALUES (?, ?, ?)`, n, func(i uint64) []any {
		return []any{int64(i), balance, filler}
	})
}

func (s *sqliteSys) loadJobs(ctx context.Context, n int) error {
	return s.load(ctx, `INSERT INTO jobs (id, status, payload) VALUES (?, 'todo', ?)`, n, func(i uint64) []any {
		return []any{int64(i), jobValue(i)[5:]}
	})
}

func (s *sqliteSys) readShare(ctx context.Context, keys []uint64) error {
	tx, err := s.rdb.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, k := range keys {
		var v []byte
		if err := tx.StmtContext(ctx, s.getKV).QueryRowContext(ctx, int64(k)).Scan(&v); err != nil {
			return fmt.Errorf("kv %d: %w", k, err)
		}
	}
	return tx.Commit()
}

func (s *sqliteSys) scan(ctx context.Context) (rows int, n int64, err error) {
	r, err := s.rdb.QueryContext(ctx, `SELECT id, v FROM kv ORDER BY id`)
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	var id int64
	var v sql.RawBytes
	for r.Next() {
		if err := r.Scan(&id, &v); err != nil {
			return 0, 0, err
		}
		rows++
		n += int64(len(v))
	}
	return rows, n, r.Err()
}

func (s *sqliteSys) claim(ctx context.Context, worker int) (job uint64, ok bool, err error) {
	err = s.update(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.StmtContext(ctx, s.firstJob).QueryRowContext(ctx).Scan(&id)
		if err == sql.ErrNoRows {
			return nil
		}
		if err != nil {
			return err
		}
		job, ok = uint64(id), true
		if !keepJob(job) {
			if _, err := tx.StmtContext(ctx, s.delJob).ExecContext(ctx, id); err != nil {
				return err
			}
		}
		_, err = tx.StmtContext(ctx, s.addDone).ExecContext(ctx, id, worker)
		return err
	})
	return job, ok, err
}

func (s *sqliteSys) transfer(ctx context.Context, from, to uint64, amount int64) error {
	return s.update(ctx, func(tx *sql.Tx) error {
		for _, u := range []struct {
			id    uint64
			delta int64
		}{{from, -amount}, {to, credit(amount)}} {
			r, err := tx.StmtContext(ctx, s.move).ExecContext(ctx, u.delta, int64(u.id))
			if err != nil {
				return err
			}
			if n, err := r.RowsAffected(); err != nil || n != 1 {
				return fmt.Errorf("account %d: %d rows updated (%v)", u.id, n, err)
			}
		}
		return nil
	})
}

func (s *sqliteSys) bankTotal(ctx context.Context) (total int64, n int, err error) {
	err = s.rdb.QueryRowContext(ctx, `SELECT coalesce(sum(bal), 0), count(*) FROM accounts`).Scan(&total, &n)
	return total, n, err
}

func (s *sqliteSys) queueState(ctx context.Context) (left int, done []uint64, err error) {
	if err := s.rdb.QueryRowContext(ctx, `SELECT count(*) FROM jobs`).Scan(&left); err != nil {
		return 0, nil, err
	}
	r, err := s.rdb.QueryContext(ctx, `SELECT job FROM done`)
	if err != nil {
		return 0, nil, err
	}
	defer r.Close()
	for r.Next() {
		var j int64
		if err := r.Scan(&j); err != nil {
			return 0, nil, err
		}
		done = append(done, uint64(j))
	}
	return left, done, r.Err()
}

func (s *sqliteSys) write(ctx context.Context, key uint64, value []byte) error {
	_, err := s.insW.ExecContext(ctx, int64(key), value)
	return err
}

func (s *sqliteSys) close() error {
	var errs []error
	for _, st := range []*sql.Stmt{s.getKV, s.firstJob, s.delJob, s.addDone, s.move, s.insW} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errorsJoin(append(errs, s.rdb.Close(), s.wdb.Close())...)
}
