package bench

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// PostgreSQL 15 beside tupled, in the same invocation.
//
// When Config.PG asks for it, Run measures the workload's ratios on a
// throw-away PostgreSQL 15 cluster the way bench/pg/run.sh does (initdb
// into a temp dir, a free loopback port, fsync and synchronous_commit on,
// max_wal_size 8GB and checkpoint_timeout 30min so that no checkpoint
// lands in a run; pgbench -n -M prepared -c C -j C with the scripts of
// bench/pg/), so that the reader sees PostgreSQL's ratio on the same
// machine at the same time. Differences from run.sh, to fit the main job
// in a minute: the table is generated server-side (pgbench -i -I dtGvp),
// the cluster is set up while tupled loads its table (before any variant
// is measured), and the rounds are fewer and shorter (PGRounds; -T 4, not
// 10). The variants of both systems never run at the same time.
//
// Warm-up. Every pgbench run starts C fresh backends, and a fresh backend
// is slow for its first seconds (measured; the likely cause: each buffer
// of shared_buffers it touches for the first time costs it a page fault,
// which is dear on this project's Firecracker/PVM VMs, and a 1M-row table
// is 19k buffers). run.sh's -T 10 averages that ramp away; a 2-second run measured
// mostly the ramp (30 clients under load: plain 700–900 tps over -T 2
// against ~1,000 once warm, share 410–470 against 730–880, so the ratio
// came out 0.52–0.58 instead of 0.74–0.83). So each run is pgbench -T
// pgWarmSeconds+secs -P 1, and its tps is the mean of the progress
// seconds after the first pgWarmSeconds (pgbench's seconds count from the
// thread's start, connections included); the table and its index are
// also read into shared_buffers once, during setup (pg_prewarm), so that
// the first round does not pay for filling them.

// pgWarmSeconds: the seconds at the start of each pgbench run that are
// not measured (see above).
const pgWarmSeconds = 2

//go:embed pg/forshare-*.sql
var pgScripts embed.FS

// PGResult is PostgreSQL's side of a run: measured now, or why not.
type PGResult struct {
	Measured bool   `json:"measured"`
	How      string `json:"how,omitempty"`  // the pgbench command and settings
	Note     string `json:"note,omitempty"` // why it was not measured
	// TPS holds each variant's tps per round: the mean of pgbench's
	// progress seconds after the warm-up (pgWarmSeconds).
	TPS     map[string][]float64 `json:"tps,omitempty"`
	Spreads []Spread             `json:"ratios,omitempty"`
}

func (pg *PGResult) spread(variant, baseline string) (Spread, bool) {
	for _, s := range pg.Spreads {
		if s.Variant == variant && s.Baseline == baseline {
			return s, true
		}
	}
	return Spread{}, false
}

// pgCluster is a throw-away PostgreSQL 15 cluster.
type pgCluster struct {
	bin     string // initdb, pg_ctl
	pgbench string
	dir     string
	port    int
	runas   []string // runuser -u postgres -- (as root: PostgreSQL refuses root)
	scale   int
	started bool
	// prewarmErr: why pg_prewarm failed during setup (nil: it did not).
	prewarmErr error
}

// findPG locates PostgreSQL 15's server binaries and pgbench as
// bench/pg/run.sh does, or says why it cannot run.
func findPG() (*pgCluster, error) {
	c := &pgCluster{bin: "/usr/lib/postgresql/15/bin"}
	if _, err := os.Stat(filepath.Join(c.bin, "initdb")); err != nil {
		p, err := exec.LookPath("initdb")
		if err != nil {
			return nil, errors.New("PostgreSQL 15's initdb not found (/usr/lib/postgresql/15/bin or PATH)")
		}
		c.bin = filepath.Dir(p)
	}
	c.pgbench = filepath.Join(c.bin, "pgbench")
	if _, err := os.Stat(c.pgbench); err != nil {
		p, err := exec.LookPath("pgbench")
		if err != nil {
			return nil, errors.New("pgbench not found")
		}
		c.pgbench = p
	}
	if os.Geteuid() == 0 {
		if _, err := user.Lookup("postgres"); err != nil {
			return nil, errors.New("running as root and there is no postgres user to run the server as")
		}
		rp, err := exec.LookPath("runuser")
		if err != nil {
			return nil, errors.New("running as root and runuser is missing")
		}
		c.runas = []string{rp, "-u", "postgres", "--"}
	}
	return c, nil
}

func (c *pgCluster) server(ctx context.Context, name string, args ...string) *exec.Cmd {
	argv := append(append(append([]string{}, c.runas...), filepath.Join(c.bin, name)), args...)
	return exec.CommandContext(ctx, argv[0], argv[1:]...)
}

func runLogged(cmd *exec.Cmd) error {
	out, err := cmd.CombinedOutput()
	if err != nil {
		tail := strings.TrimSpace(string(out))
		if len(tail) > 400 {
			tail = "…" + tail[len(tail)-400:]
		}
		return fmt.Errorf("%s: %v: %s", filepath.Base(cmd.Path), err, tail)
	}
	return nil
}

// start creates the cluster and a pgbench_accounts of rows rows.
func (c *pgCluster) start(ctx context.Context, rows int) error {
	if rows%100000 != 0 {
		return fmt.Errorf("pgbench tables come in scales of 100000 rows; -s %d is not one", rows)
	}
	c.scale = rows / 100000
	if err := c.startServer(ctx); err != nil {
		return err
	}
	dir := c.dir
	for _, v := range []string{"plain", "keyshare", "share", "nokeyupdate", "update"} {
		b, err := pgScripts.ReadFile("pg/forshare-" + v + ".sql")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "forshare-"+v+".sql"), b, 0o644); err != nil {
			return err
		}
	}
	if err := runLogged(c.pgbenchCmd(ctx, "-i", "-q", "-I", "dtGvp", "-s", strconv.Itoa(c.scale))); err != nil {
		return err
	}
	// Read the table and its index into shared_buffers (see Warm-up).
	prewarm := filepath.Join(dir, "prewarm.sql")
	if err := os.WriteFile(prewarm, []byte(pgPrewarmSQL), 0o644); err != nil {
		return err
	}
	// Without the extension (a PostgreSQL without its contrib modules)
	// the runs are measured all the same; How says so.
	c.prewarmErr = runLogged(c.pgbenchCmd(ctx, "-n", "-t", "1", "-f", prewarm))
	return nil
}

// startServer creates the cluster in a temp dir and starts its server on
// a free loopback port, with bench/pg/run.sh's settings.
func (c *pgCluster) startServer(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "tupled-bench-pg.")
	if err != nil {
		return err
	}
	c.dir = dir
	if c.runas != nil {
		u, err := user.Lookup("postgres")
		if err != nil {
			return err
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return err
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	c.port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	data := filepath.Join(dir, "data")
	if err := runLogged(c.server(ctx, "initdb", "-D", data, "-A", "trust", "-U", "postgres")); err != nil {
		return err
	}
	conf := fmt.Sprintf(`
# tupled bench (as bench/pg/run.sh)
listen_addresses = '127.0.0.1'
port = %d
unix_socket_directories = '%s'
max_connections = 100
shared_buffers = 2GB
fsync = on
synchronous_commit = on
full_page_writes = on
max_wal_size = 8GB
checkpoint_timeout = 30min
log_min_messages = warning
`, c.port, dir)
	f, err := os.OpenFile(filepath.Join(data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(conf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	c.started = true
	return runLogged(c.server(ctx, "pg_ctl", "-D", data, "-l", filepath.Join(dir, "server.log"), "-w", "-t", "60", "start"))
}

// pgPrewarmSQL reads pgbench_accounts and its primary key into
// shared_buffers (the pg_prewarm extension ships with PostgreSQL).
const pgPrewarmSQL = `CREATE EXTENSION IF NOT EXISTS pg_prewarm;
SELECT pg_prewarm('pgbench_accounts');
SELECT pg_prewarm('pgbench_accounts_pkey');
`

func (c *pgCluster) pgbenchCmd(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.pgbench, args...)
	cmd.Env = append(os.Environ(), "PGHOST=127.0.0.1", "PGPORT="+strconv.Itoa(c.port), "PGUSER=postgres", "PGDATABASE=postgres")
	return cmd
}

var pgbenchProgress = regexp.MustCompile(`(?m)^progress: ([0-9.]+) s, ([0-9.]+) tps`)

// parsePgbenchSteady takes the tps of a pgbench -P 1 -T warm+secs run
// after its first warm seconds: the mean of the progress lines stamped
// (warm, warm+secs] (pgbench stamps them from its threads' start,
// connections included). pgbench often ends before it prints its last
// line, so the mean is over the lines present; with secs ≥ 2 there is
// always one.
func parsePgbenchSteady(out string, warm, secs int) (float64, error) {
	var sum float64
	n := 0
	for _, m := range pgbenchProgress.FindAllStringSubmatch(out, -1) {
		t, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return 0, err
		}
		if t <= float64(warm) || t > float64(warm+secs) {
			continue
		}
		tps, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			return 0, err
		}
		sum += tps
		n++
	}
	if n == 0 {
		return 0, fmt.Errorf("no progress line after the first %d s in pgbench's output: %q", warm, strings.TrimSpace(out))
	}
	return sum / float64(n), nil
}

// hasScript says whether bench/pg has a script for forshare's variant.
func hasScript(variant string) bool {
	_, err := pgScripts.ReadFile("pg/forshare-" + variant + ".sql")
	return err == nil
}

// pgbenchRunArgs is the pgbench command line of one measured run of
// variant: run.sh's (-n -M prepared -c C -j C) for warm+secs seconds with
// a progress line every second.
func (c *pgCluster) pgbenchRunArgs(variant string, clients, warm, secs int) []string {
	cl := strconv.Itoa(clients)
	return []string{"-n", "-M", "prepared", "-c", cl, "-j", cl, "-T", strconv.Itoa(warm + secs), "-P", "1",
		"-s", strconv.Itoa(c.scale), "-f", filepath.Join(c.dir, "forshare-"+variant+".sql")}
}

// run runs one variant with clients clients and returns its tps over secs
// seconds after a warm-up of pgWarmSeconds.
func (c *pgCluster) run(ctx context.Context, variant string, clients, secs int) (float64, error) {
	out, err := c.pgbenchCmd(ctx, c.pgbenchRunArgs(variant, clients, pgWarmSeconds, secs)...).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("pgbench %s: %v: %s", variant, err, strings.TrimSpace(string(out)))
	}
	return parsePgbenchSteady(string(out), pgWarmSeconds, secs)
}

// stop stops the server and removes the cluster.
func (c *pgCluster) stop() {
	if c.started {
		_ = c.server(context.Background(), "pg_ctl", "-D", filepath.Join(c.dir, "data"), "stop", "-m", "fast").Run()
	}
	if c.dir != "" {
		_ = os.RemoveAll(c.dir)
	}
}

// pgSide runs PostgreSQL's half of a run: setup (started by startPG, in
// the background while tupled loads), then its rounds after tupled's.
type pgSide struct {
	c     *pgCluster
	ready chan error
	res   *PGResult
}

// startPG starts setting up the cluster in the background, or returns a
// side that only notes why PostgreSQL is not measured. mode is Config.PG.
func startPG(ctx context.Context, mode string, rows int) (*pgSide, error) {
	s := &pgSide{res: &PGResult{}}
	c, err := findPG()
	if err == nil && rows%100000 != 0 {
		err = fmt.Errorf("pgbench tables come in scales of 100000 rows; -s %d is not one", rows)
	}
	if err != nil {
		if mode == "on" {
			return nil, fmt.Errorf("--pg on: %w", err)
		}
		s.res.Note = err.Error()
		return s, nil
	}
	s.c = c
	s.ready = make(chan error, 1)
	go func() { s.ready <- c.start(ctx, rows) }()
	return s, nil
}

// waitReady waits for the setup; a failed setup turns into a note (or the
// run's error with --pg on).
func (s *pgSide) waitReady(mode string) error {
	if s.c == nil || s.ready == nil {
		return nil
	}
	err := <-s.ready
	s.ready = nil
	if err != nil {
		s.c.stop()
		s.c = nil
		if mode == "on" {
			return fmt.Errorf("PostgreSQL: %w", err)
		}
		s.res.Note = "PostgreSQL did not start: " + err.Error()
	}
	return nil
}

// measure runs the variants that have a bench/pg script, alternated over
// rounds, and computes their ratios to baseline.
func (s *pgSide) measure(ctx context.Context, out io.Writer, variants []string, baseline string, clients, secs, rounds int) error {
	if s.c == nil {
		return nil
	}
	var vs []string
	for _, v := range variants {
		if hasScript(v) {
			vs = append(vs, v)
		}
	}
	s.res.How = pgHow(clients, secs, rounds)
	if s.c.prewarmErr != nil {
		s.res.How += " (shared_buffers not prewarmed: " + s.c.prewarmErr.Error() + ")"
	}
	s.res.TPS = map[string][]float64{}
	fmt.Fprintf(out, "PostgreSQL 15 (a throw-away cluster, as bench/pg/run.sh): %s\n", s.res.How)
	t0 := time.Now()
	for round := 1; round <= rounds; round++ {
		for _, v := range vs {
			tps, err := s.c.run(ctx, v, clients, secs)
			if err != nil {
				return err
			}
			s.res.TPS[v] = append(s.res.TPS[v], tps)
			fmt.Fprintf(out, "round %d/%d  %-24s %10.1f tps  (PostgreSQL 15)\n", round, rounds, v, tps)
		}
	}
	base := s.res.TPS[baseline]
	for _, v := range vs {
		var rs []float64
		for i, t := range s.res.TPS[v] {
			if i < len(base) && base[i] > 0 {
				rs = append(rs, t/base[i])
			}
		}
		if len(rs) > 0 {
			s.res.Spreads = append(s.res.Spreads, spreadOf(v, baseline, rs))
		}
	}
	s.res.Measured = true
	fmt.Fprintf(out, "(PostgreSQL's rounds took %.1f s)\n", time.Since(t0).Seconds())
	return nil
}

// pgHow says how PostgreSQL was measured (PGResult.How).
func pgHow(clients, secs, rounds int) string {
	return fmt.Sprintf("pgbench -M prepared -c %d -j %d -T %d -P 1, tps of seconds %d–%d (the first %d warm the fresh backends up), %d alternated rounds, synchronous_commit on, on disk",
		clients, clients, pgWarmSeconds+secs, pgWarmSeconds+1, pgWarmSeconds+secs, pgWarmSeconds, rounds)
}

func (s *pgSide) close() {
	if s == nil || s.c == nil {
		return
	}
	if s.ready != nil {
		<-s.ready
	}
	s.c.stop()
}
