package crash_test

// Suite 2 of issue 3: real process crashes. TestKillRestart re-executes the
// test binary (-test.run=^TestHelperProcess$ with crashChildEnv set) on a
// directory of the real file system; the child drives the concurrent
// workload of tests/utils/crash.go and writes every ledger event to stdout as
// one line, with one write(2) per line, before it goes on (a registration
// before Commit is called, an acknowledgement after it returned nil), so
// the parent has every line the child wrote before it died. The parent
// SIGKILLs it at a random moment, reopens the database in-process, checks
// it against the lines (a torn last line is ignored), makes the recovered
// state the next baseline, and starts the next child on the same directory.

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/tests/utils"
)

var (
	flagSoak  = flag.Bool("soak", false, "TestKillRestart: 1000 kills per backend")
	flagKills = flag.Int("crash.kills", 20, "TestKillRestart: kills per backend (without -soak)")
)

const crashChildEnv = "TUPLED_CRASH_CHILD" // backend:gen:seed:dir

// lockedWriter makes each line one Write call on the underlying file.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (lw *lineWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.w.Write(p)
}

// ackCounter passes writes to w and calls done once want acknowledgement
// lines ("a seq") have gone by. Its writes come through a lineWriter: one
// at a time, each a whole number of lines.
type ackCounter struct {
	w    io.Writer
	want int
	seen int
	done func()
}

func (a *ackCounter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(string(p), "\n") {
		if strings.HasPrefix(line, "a ") {
			a.seen++
			if a.seen == a.want {
				a.done()
			}
		}
	}
	return a.w.Write(p)
}

func childOpts(be tupled.Backend, rng *rand.Rand) *tupled.Options {
	o := utils.CrashOpts(nil, be, rng)
	o.CheckpointInterval = time.Duration(20+rng.IntN(200)) * time.Millisecond
	return o
}

// runCrashChild drives the workload on dir until ctx ends (in a child
// process: until it is killed) and writes the ledger lines to out.
func runCrashChild(ctx context.Context, t testing.TB, be tupled.Backend, gen int, seed uint64, dir string, out io.Writer) error {
	rng := rand.New(rand.NewPCG(seed, uint64(gen)))
	db, err := tupled.Open(dir, childOpts(be, rng))
	if err != nil {
		return err
	}
	l := utils.NewLedger()
	l.Out = out
	w := &utils.Workload{DB: db, L: l, Seed: rng.Uint64(), Gen: gen, CkptEvery: time.Duration(5+rng.IntN(50)) * time.Millisecond}
	io.WriteString(out, "ready\n")
	stop := w.Run(ctx, 3, 2, 2, 1)
	<-ctx.Done()
	stop()
	cerr := db.Close()
	if err := w.Err(); err != nil {
		return err
	}
	return cerr
}

// TestHelperProcess is the child of TestKillRestart. Run directly (no
// environment), it runs the child in-process for a moment, stops it
// cleanly, and checks the lines it wrote against the reopened database, so
// the child and the line protocol are tested on their own.
func TestHelperProcess(t *testing.T) {
	if spec := os.Getenv(crashChildEnv); spec != "" {
		parts := strings.SplitN(spec, ":", 4)
		be, _ := strconv.Atoi(parts[0])
		gen, _ := strconv.Atoi(parts[1])
		seed, _ := strconv.ParseUint(parts[2], 10, 64)
		err := runCrashChild(context.Background(), t, tupled.Backend(be), gen, seed, parts[3], &lineWriter{w: os.Stdout})
		fmt.Fprintln(os.Stderr, "child ended:", err)
		os.Exit(3) // never reached while the parent kills it in time
	}
	seed := utils.CrashSeed(t)
	for _, be := range utils.Backends {
		t.Run(be.Name, func(t *testing.T) {
			dir := t.TempDir()
			l := initDir(t, dir, be.B)
			var buf bytes.Buffer
			// run until the child has acknowledged a few commits (not for
			// a fixed time: a race-built child on a loaded machine may
			// acknowledge nothing in the first few hundred milliseconds),
			// at most 30 s
			ctx, cancel := context.WithTimeout(bg, 30*time.Second)
			defer cancel()
			acks := &ackCounter{w: &buf, want: 3, done: cancel}
			require.NoError(t, runCrashChild(ctx, t, be.B, 1, seed, dir, &lineWriter{w: acks}), "seed %d", seed)
			require.NoError(t, parseChildLines(l, buf.Bytes()))
			require.Positive(t, l.NAcked, "seed %d: the child acknowledged nothing", seed)
			require.Empty(t, l.Inflight, "seed %d: a clean stop leaves nothing in flight", seed)
			db, err := tupled.Open(dir, utils.ReopenOpts(nil, be.B))
			require.NoError(t, err)
			defer func() { require.NoError(t, db.Close()) }()
			utils.CheckRecovered(t, db, l.SnapshotLocked(), fmt.Sprintf("seed %d clean stop", seed))
		})
	}
}

// initDir creates the database with its tables and returns the ledger of
// its initial state.
func initDir(t testing.TB, dir string, be tupled.Backend) *utils.Ledger {
	db, err := tupled.Open(dir, &tupled.Options{Backend: be})
	require.NoError(t, err)
	utils.SetupTables(t, db)
	require.NoError(t, db.Close())
	l := utils.NewLedger()
	l.SetInitial()
	return l
}

// parseChildLines applies the complete lines of a child's output to l.
func parseChildLines(l *utils.Ledger, out []byte) error {
	lines := strings.Split(string(out), "\n")
	lines = lines[:len(lines)-1] // after the last newline: empty, or torn by the kill
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "ready":
		case "b":
			id, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				return fmt.Errorf("line %q: %w", line, err)
			}
			l.MaxXid = max(l.MaxXid, id)
		case "r":
			seq, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return fmt.Errorf("line %q: %w", line, err)
			}
			var ws []utils.Write
			for _, w := range f[2:] {
				// table/key@ord=value or table/key@ord!
				tk, rest, _ := strings.Cut(w, "@")
				table, key, _ := strings.Cut(tk, "/")
				var lw utils.Write
				lw.Table, lw.Key = table, key
				var ordS string
				if o, v, ok := strings.Cut(rest, "="); ok {
					ordS, lw.St = o, utils.KState{Present: true, Val: v}
				} else {
					ordS = strings.TrimSuffix(rest, "!")
				}
				if lw.Ord, err = strconv.ParseUint(ordS, 10, 64); err != nil {
					return fmt.Errorf("line %q: %w", line, err)
				}
				ws = append(ws, lw)
			}
			l.Inflight[seq] = ws
		case "a":
			seq, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return fmt.Errorf("line %q: %w", line, err)
			}
			if _, ok := l.Inflight[seq]; !ok {
				return fmt.Errorf("line %q: acknowledgement of an unregistered commit", line)
			}
			l.AckLocked(seq)
		default:
			return fmt.Errorf("unexpected child output %q", line)
		}
	}
	return nil
}

// TestKillRestart: SIGKILL the child at random moments, restart, check,
// repeat, on both backends, on the real file system.
func TestKillRestart(t *testing.T) {
	seed := utils.CrashSeed(t)
	kills := *flagKills
	if testing.Short() && raceEnabled {
		kills = max(1, kills/5) // a race-built child takes seconds per kill
	}
	if *flagSoak {
		kills = 1000
	}
	for _, be := range utils.Backends {
		t.Run(be.Name, func(t *testing.T) {
			start := time.Now()
			rng := rand.New(rand.NewPCG(seed, uint64(be.B)))
			dir := t.TempDir()
			l := initDir(t, dir, be.B)
			acked := 0
			for gen := 1; gen <= kills; gen++ {
				what := fmt.Sprintf("seed %d %s kill %d", seed, be.Name, gen)
				out := killChild(t, be.B, gen, seed, dir, time.Duration(rng.IntN(300))*time.Millisecond, what)
				before := l.NAcked
				require.NoError(t, parseChildLines(l, out), what)
				acked += l.NAcked - before
				db, err := tupled.Open(dir, utils.ReopenOpts(nil, be.B))
				require.NoError(t, err, "%s: reopen", what)
				state := utils.CheckRecovered(t, db, l.SnapshotLocked(), what)
				require.NoError(t, db.Close(), what)
				l.Rebase(state)
			}
			require.Positive(t, acked, "seed %d: no child acknowledged a commit", seed)
			t.Logf("%s: %d kills, %d commits acknowledged, %v", be.Name, kills, acked, time.Since(start))
		})
	}
}

// killChild starts a child on dir, lets it run for d after it is ready,
// SIGKILLs it and returns what it wrote.
func killChild(t *testing.T, be tupled.Backend, gen int, seed uint64, dir string, d time.Duration, what string) []byte {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d:%d:%d:%s", crashChildEnv, be, gen, seed, dir))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pr, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start(), what)
	var (
		mu    sync.Mutex
		out   []byte
		ready = make(chan struct{})
		done  = make(chan struct{})
	)
	go func() {
		defer close(done)
		buf := make([]byte, 64<<10)
		once := sync.OnceFunc(func() { close(ready) })
		defer once()
		for {
			n, err := pr.Read(buf)
			mu.Lock()
			out = append(out, buf[:n]...)
			if bytes.HasPrefix(out, []byte("ready\n")) {
				once()
			}
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
	}
	time.Sleep(d)
	mu.Lock()
	started := bytes.HasPrefix(out, []byte("ready\n"))
	mu.Unlock()
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
	werr := cmd.Wait()
	require.True(t, started, "%s: the child never got ready: %v\n%s", what, werr, stderr.String())
	var ee *exec.ExitError
	require.ErrorAs(t, werr, &ee, what)
	ws, ok := ee.Sys().(syscall.WaitStatus)
	require.True(t, ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL, "%s: the child ended by itself (%v):\n%s", what, werr, stderr.String())
	return out
}
