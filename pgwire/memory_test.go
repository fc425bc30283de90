package pgwire

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
)

// heapInUse is the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC() // the first may leave finalizer-held objects for the second
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// residentBytes is the process's VmRSS from /proc, or 0 where there is none.
func residentBytes() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// TestMemoryReturnsAfterBurst is finding 6 of the hardening issue seen from
// outside: a burst of connections that each push large messages through
// the server — SASL messages at the 64 KB cap before authentication, and
// 1 MiB queries after it — must not leave that memory behind. While the
// connections sit idle each may keep only keptBodyBuf of buffers; once
// they have closed the heap is back at its baseline, and the process's
// resident size returns with it once the Go runtime gives its freed pages
// back (its scavenger does so in the background; the test forces it).
// The resident check also covers the C heap of the SQL parser, which kept
// ~100 MiB of a 150-statement burst for good until sqlfe pinned glibc's
// mmap threshold (sqlfe/malloc_glibc.go).
func TestMemoryReturnsAfterBurst(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.Password = "s3cret" })
	trust := startServer(t, nil)
	burst, querySz := 150, 1<<20
	if raceEnabled { // the race detector slows the parser's checks of 150 MiB of text tenfold
		burst, querySz = 32, 256<<10
	}
	// Warm the server's and the test's code paths once, so the baseline
	// holds what any server holds, not what the first connection builds.
	c0, err := pgx.Connect(t.Context(), ts.connString("password=s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	exec(t, c0, "SELECT 1")
	c0.Close(t.Context())
	rc0 := trust.dialRaw(t)
	rc0.start()
	rc0.write(frontendBytes(&pgproto3.Query{String: "SELECT 'y' = ''"}))
	rc0.recv(nil)
	rc0.nc.Close()
	waitFor(t, "no session", func() bool { return ts.srv.Sessions() == 0 && trust.srv.Sessions() == 0 })
	baseHeap, baseRSS := heapInUse(), residentBytes()

	// Phase 1: unauthenticated clients, each sending a SASL message at the
	// cap (a malformed SCRAM message the server reads whole and refuses).
	var wg sync.WaitGroup
	for range burst {
		rc := ts.dialRaw(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			rc.write(startupBytes(protocol30, "user", "intruder"))
			rc.recv(func(pgproto3.BackendMessage) bool { return true }) // AuthenticationSASL
			init := &pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256"}
			init.Data = bytes.Repeat([]byte("x"), maxAuthMessageLen-(4+len(init.AuthMechanism)+1+4))
			rc.send(init)
			expect(t, "a SASL message at the cap", rc.recv(func(pgproto3.BackendMessage) bool { return false }),
				`FATAL 28P01 password authentication failed for user "intruder"`, "EOF")
		}()
	}
	wg.Wait()

	// Phase 2: sessions (on a second server, trusting, so the raw clients
	// need no SCRAM), each sending a 1 MiB query, then staying open and
	// idle. The clients write prepared bytes and get a one-row answer, so
	// the test's own side of the connections holds no large buffer.
	big := frontendBytes(&pgproto3.Query{String: "SELECT '" + strings.Repeat("y", querySz) + "' = ''"})
	clients := make([]*rawClient, burst)
	for i := range clients {
		clients[i] = trust.dialRaw(t)
		clients[i].start()
	}
	var peakRSS uint64
	var mu sync.Mutex
	for _, rc := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rc.write(big)
			expect(t, "a 1 MiB query", rc.recv(nil), "RowDescription", "D f", "C SELECT 1", "ReadyForQuery")
			mu.Lock()
			peakRSS = max(peakRSS, residentBytes())
			mu.Unlock()
		}()
	}
	wg.Wait()
	if n := trust.srv.Sessions(); n != burst {
		t.Fatalf("%d sessions open, want %d", n, burst)
	}
	idleHeap := heapInUse()
	// Each idle session may keep its 8 KiB input and output buffers, plus
	// its goroutines, session state and bufio: allow 64 KiB a session.
	perConn := (int64(idleHeap) - int64(baseHeap)) / int64(burst)
	t.Logf("heap: baseline %d KiB, %d idle sessions after %d KiB queries %d KiB (%d B each)", baseHeap>>10, burst, querySz>>10, idleHeap>>10, perConn)
	if perConn > 64<<10 {
		t.Errorf("each idle session holds %d bytes after a 1 MiB query; buffers are kept", perConn)
	}

	for _, rc := range clients {
		rc.write(frontendBytes(&pgproto3.Terminate{}))
		rc.nc.Close()
	}
	for _, s := range []*Server{ts.srv, trust.srv} {
		waitFor(t, "every connection gone", func() bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			return len(s.conns) == 0
		})
	}
	afterHeap := heapInUse()
	debug.FreeOSMemory()
	afterRSS := residentBytes()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("go runtime holds %d MiB from the OS (sys %d, released %d, stacks %d)", (ms.Sys-ms.HeapReleased)>>20, ms.Sys>>20, ms.HeapReleased>>20, ms.StackSys>>20)
	t.Logf("heap after close: %d KiB; RSS baseline %d MiB, peak %d MiB, after close %d MiB",
		afterHeap>>10, baseRSS>>20, peakRSS>>20, afterRSS>>20)
	if grown := int64(afterHeap) - int64(baseHeap); grown > 4<<20 {
		t.Errorf("heap grew by %d KiB over the burst and stayed", grown>>10)
	}
	if !raceEnabled && baseRSS > 0 && afterRSS > baseRSS+32<<20 {
		t.Errorf("resident size %d MiB after the burst closed, baseline %d MiB", afterRSS>>20, baseRSS>>20)
	}
}
