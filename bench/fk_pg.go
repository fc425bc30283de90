package bench

import (
	"context"
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// PostgreSQL's side of `tupled bench fk` (fk.go).

//go:embed pg/fk-*.sql
var pgFKScripts embed.FS

// pgFK is PostgreSQL's side: the schema of bench/pg/fk-setup.sql, children
// inserted by pgbench -c CLIENTS (fk-child.sql) beside one more pgbench
// client updating the parents (fk-parent.sql).
type pgFK struct {
	c       *pgCluster
	parents int
	conn    *pgx.Conn
}

func (p *pgFK) start(ctx context.Context) error {
	if err := p.c.startServer(ctx); err != nil {
		return err
	}
	for _, name := range []string{"fk-child.sql", "fk-parent.sql"} {
		b, err := pgFKScripts.ReadFile("pg/" + name)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(p.c.dir, name), b, 0o644); err != nil {
			return err
		}
	}
	conn, err := pgx.Connect(ctx, fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=postgres", p.c.port))
	if err != nil {
		return err
	}
	p.conn = conn
	setup, err := pgFKScripts.ReadFile("pg/fk-setup.sql")
	if err != nil {
		return err
	}
	_, err = conn.Exec(ctx, strings.ReplaceAll(string(setup), ":parents", strconv.Itoa(p.parents)))
	return err
}

type pgFKRound struct{ tps, updates, multi, members float64 }

// counters reads the children inserted and the next multixact id and
// member offset (after a CHECKPOINT, which is when pg_control has them).
func (p *pgFK) counters(ctx context.Context) (children, multi, offset float64, err error) {
	if _, err = p.conn.Exec(ctx, "CHECKPOINT"); err != nil {
		return
	}
	var m, o int64
	if err = p.conn.QueryRow(ctx, "SELECT next_multixact_id::text::bigint, next_multi_offset::text::bigint FROM pg_control_checkpoint()").Scan(&m, &o); err != nil {
		return
	}
	var n int64
	if err = p.conn.QueryRow(ctx, "SELECT count(*) FROM child").Scan(&n); err != nil {
		return
	}
	return float64(n), float64(m), float64(o), nil
}

func (p *pgFK) round(ctx context.Context, clients, secs int) (pgFKRound, error) {
	var r pgFKRound
	n0, m0, o0, err := p.counters(ctx)
	if err != nil {
		return r, err
	}
	total := strconv.Itoa(pgWarmSeconds + secs)
	set := "parents=" + strconv.Itoa(p.parents)
	child := p.c.pgbenchCmd(ctx, "-n", "-M", "prepared", "-c", strconv.Itoa(clients), "-j", strconv.Itoa(clients), "-T", total, "-P", "1", "-D", set, "-f", filepath.Join(p.c.dir, "fk-child.sql"))
	parent := p.c.pgbenchCmd(ctx, "-n", "-M", "prepared", "-c", "1", "-j", "1", "-T", total, "-D", set, "-f", filepath.Join(p.c.dir, "fk-parent.sql"))
	var parentOut strings.Builder
	parent.Stdout, parent.Stderr = &parentOut, &parentOut
	if err := parent.Start(); err != nil {
		return r, err
	}
	childOut, cerr := child.CombinedOutput()
	perr := parent.Wait()
	if cerr != nil {
		return r, fmt.Errorf("pgbench fk-child: %v: %s", cerr, strings.TrimSpace(string(childOut)))
	}
	if perr != nil {
		return r, fmt.Errorf("pgbench fk-parent: %v: %s", perr, strings.TrimSpace(parentOut.String()))
	}
	if r.tps, err = parsePgbenchSteady(string(childOut), pgWarmSeconds, secs); err != nil {
		return r, err
	}
	if r.updates, err = pgbenchTotalTPS(parentOut.String()); err != nil {
		return r, err
	}
	n1, m1, o1, err := p.counters(ctx)
	if err != nil {
		return r, err
	}
	if d := n1 - n0; d > 0 {
		r.multi, r.members = (m1-m0)/d, (o1-o0)/d
	}
	return r, nil
}

func (p *pgFK) how(clients, secs int) string {
	return fmt.Sprintf("pgbench -M prepared -c %d -j %d -T %d -P 1 -f fk-child.sql (tps of seconds %d–%d) beside pgbench -c 1 -f fk-parent.sql, %d hot parents, one round after each of tupled's, synchronous_commit on, on disk; multixacts from pg_control_checkpoint() around each round",
		clients, clients, pgWarmSeconds+secs, pgWarmSeconds+1, pgWarmSeconds+secs, p.parents)
}

// pgbenchTotalTPS is the tps pgbench prints in its summary.
func pgbenchTotalTPS(out string) (float64, error) {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "tps = ") {
			f := strings.Fields(l)
			if len(f) >= 3 {
				return strconv.ParseFloat(f[2], 64)
			}
		}
	}
	return 0, fmt.Errorf("no tps line in pgbench's output: %q", strings.TrimSpace(out))
}
