package storage

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// Real process crashes: the test binary re-executes itself as a child that
// commits numbered batches and prints "ack N" once Commit(sync=true) of
// batch N returned; the parent SIGKILLs it (or it dies by itself) and
// reopens the store. Every acknowledged batch must be there, each batch
// entirely or not at all, survivors a prefix of commit order. This is how
// bbolt's crash atomicity is tested (it cannot run on a vfs.MemFS).

const (
	childEnv     = "TUPLED_STORAGE_CHILD" // mode:kind:dir
	childBatchN  = 40                     // keys per batch
	childValueSz = 200
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(runChild(spec))
	}
	os.Exit(m.Run())
}

// runChild is the child process. It never returns normally while the
// store accepts commits: the parent kills it.
func runChild(spec string) int {
	mode, rest, _ := strings.Cut(spec, ":")
	kind, dir, _ := strings.Cut(rest, ":")
	opts := Options{Logger: quietLogger()}
	var fault *errorfs.Toggle
	if mode == "rotation-fault" {
		// Fail the creation of the next WAL file; small memtables make
		// pebble rotate its WAL quickly.
		pebbleMemTableSize = 1 << 20
		fault = walFault(errorfs.ErrInjected, errorfs.OpCreate, errorfs.OpReuseForWrite)
		opts.FS = errorfs.Wrap(vfs.Default, fault)
	}
	b, err := Open(kind, dir, opts)
	if err != nil {
		fmt.Println("open:", err)
		return 2
	}
	out := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		if fault != nil && i == 3 {
			fault.On()
		}
		sync := i%3 == 0 || fault != nil
		if err := b.Commit(buildBatch(b, i, childBatchN, childValueSz), sync); err != nil {
			fmt.Fprintln(out, "error:", err)
			out.Flush()
			return 3
		}
		if sync {
			fmt.Fprintln(out, "ack", i)
			out.Flush()
		}
	}
}

// startChild runs the child and collects its acknowledgements.
func startChild(t *testing.T, mode, kind, dir string) (cmd *exec.Cmd, acks <-chan int, lines <-chan string) {
	t.Helper()
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode+":"+kind+":"+dir)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = nil
	require.NoError(t, cmd.Start())
	ackc := make(chan int, 1<<16)
	linec := make(chan string, 16)
	go func() {
		defer close(ackc)
		defer close(linec)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if n, ok := strings.CutPrefix(sc.Text(), "ack "); ok {
				i, _ := strconv.Atoi(n)
				ackc <- i
			} else {
				select {
				case linec <- sc.Text():
				default:
				}
			}
		}
	}()
	return cmd, ackc, linec
}

// checkAfterCrash reopens the store and checks it against the last
// acknowledged batch.
func checkAfterCrash(t *testing.T, kind, dir string, lastAck int, msg string) int {
	t.Helper()
	b, err := Open(kind, dir, Options{Logger: quietLogger()})
	require.NoError(t, err, msg)
	defer func() { require.NoError(t, b.Close()) }()
	counts := map[int]int{}
	maxBatch := -1
	require.NoError(t, b.Scan([]byte("b"), []byte("c"), func(k, v []byte) error {
		i, err := strconv.Atoi(string(k[1:5]))
		if err != nil {
			return err
		}
		counts[i]++
		maxBatch = max(maxBatch, i)
		return nil
	}))
	list := make([]int, maxBatch+1)
	for i := range list {
		list[i] = counts[i]
	}
	survived := checkAllOrNothing(t, list, childBatchN, msg)
	require.Greater(t, survived, lastAck, "%s: acknowledged batch %d lost (%d survived)", msg, lastAck, survived)
	return survived
}

func TestKillChildProcess(t *testing.T) {
	kills := 4
	if testing.Short() {
		kills = 2
	}
	for _, kind := range []string{KindPebble, KindBbolt} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			seed := uint64(time.Now().UnixNano())
			rng := rand.New(rand.NewPCG(seed, 1))
			t.Logf("seed %d", seed)
			lastAck := -1
			for k := range kills {
				// A fresh directory per run keeps the numbering simple.
				runDir := fmt.Sprintf("%s/run%d", dir, k)
				cmd, acks, lines := startChild(t, "workload", kind, runDir)
				// Let it acknowledge something, then kill at a random moment.
				select {
				case a, ok := <-acks:
					if !ok {
						_ = cmd.Wait()
						t.Fatalf("child died before its first ack: %v", <-lines)
					}
					lastAck = a
				case <-time.After(30 * time.Second):
					t.Fatal("child made no progress")
				}
				time.Sleep(time.Duration(rng.IntN(80)) * time.Millisecond)
				require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
				_ = cmd.Wait()
				for a := range acks {
					lastAck = a
				}
				msg := fmt.Sprintf("%s kill %d (seed %d)", kind, k, seed)
				survived := checkAfterCrash(t, kind, runDir, lastAck, msg)
				t.Logf("%s: last ack %d, %d batches survived", msg, lastAck, survived)
			}
		})
	}
}

// TestPebbleWALRotationFaultKillsProcess: when pebble cannot create its
// next WAL file at a memtable rotation, it panics inside its commit
// pipeline after releasing a mutex its caller will unlock again, which is
// a fatal runtime error — no recover can catch it, so the process dies.
// This test documents that (the engine cannot treat it other than as a
// crash) and checks the restart recovers every acknowledged batch.
func TestPebbleWALRotationFaultKillsProcess(t *testing.T) {
	dir := t.TempDir()
	cmd, acks, lines := startChild(t, "rotation-fault", KindPebble, dir)
	lastAck := -1
	for a := range acks {
		lastAck = a
	}
	err := cmd.Wait()
	require.Error(t, err, "the child must die")
	var out []string
	for l := range lines {
		out = append(out, l)
	}
	require.NotContains(t, strings.Join(out, "\n"), "error:", "no commit returned after the fault: the process died")
	t.Logf("child: %v after %d acknowledged batches", err, lastAck+1)
	require.GreaterOrEqual(t, lastAck, 2, "the fault came on after batch 3")
	survived := checkAfterCrash(t, KindPebble, dir, lastAck, "rotation fault")
	t.Logf("%d batches survived", survived)
}
