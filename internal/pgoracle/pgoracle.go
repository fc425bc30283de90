package pgoracle

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// socketPort names the unix socket (.s.PGSQL.<port>); no TCP port is
// opened.
const socketPort = 5432

// Start starts a throw-away PostgreSQL 15 server for t and returns the
// connection string of its "postgres" database (see the package doc).
func Start(t testing.TB) (connString string) {
	t.Helper()
	bin, runas, err := find()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("pgoracle: PostgreSQL 15 is needed (CI is set, so this is not skipped): %v", err)
		}
		t.Skipf("pgoracle: skipped, no PostgreSQL 15 to check against: %v", err)
	}
	dir, err := os.MkdirTemp("", "pgoracle.")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if runas != nil {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatal(err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	server := func(name string, args ...string) *exec.Cmd {
		argv := append(append(append([]string{}, runas...), filepath.Join(bin, name)), args...)
		return exec.Command(argv[0], argv[1:]...)
	}
	data := filepath.Join(dir, "data")
	if out, err := server("initdb", "-D", data, "-A", "trust", "-U", "postgres",
		"--locale=C", "-E", "UTF8", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("pgoracle: initdb: %v: %s", err, tail(out))
	}
	conf := fmt.Sprintf(`
# pgoracle (a throw-away test server)
listen_addresses = ''
port = %d
unix_socket_directories = '%s'
fsync = off
synchronous_commit = off
full_page_writes = off
timezone = 'UTC'
log_min_messages = warning
`, socketPort, dir)
	f, err := os.OpenFile(filepath.Join(data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(conf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	logf := filepath.Join(dir, "server.log")
	if out, err := server("pg_ctl", "-D", data, "-l", logf, "-w", "-t", "60", "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(logf)
		t.Fatalf("pgoracle: pg_ctl start: %v: %s\nserver log: %s", err, tail(out), tail(log))
	}
	t.Cleanup(func() {
		if out, err := server("pg_ctl", "-D", data, "-w", "stop", "-m", "immediate").CombinedOutput(); err != nil {
			t.Errorf("pgoracle: pg_ctl stop: %v: %s", err, tail(out))
		}
	})
	return fmt.Sprintf("host=%s port=%d user=postgres dbname=postgres sslmode=disable", dir, socketPort)
}

// find locates PostgreSQL 15's server binaries and, as root, the way to
// run them as postgres.
func find() (bin string, runas []string, err error) {
	bin = "/usr/lib/postgresql/15/bin"
	if _, err := os.Stat(filepath.Join(bin, "initdb")); err != nil {
		p, err := exec.LookPath("initdb")
		if err != nil {
			return "", nil, fmt.Errorf("initdb not found in /usr/lib/postgresql/15/bin or on PATH")
		}
		bin = filepath.Dir(p)
		if r, err := filepath.EvalSymlinks(p); err == nil {
			bin = filepath.Dir(r)
		}
	}
	if os.Geteuid() == 0 {
		if _, err := user.Lookup("postgres"); err != nil {
			return "", nil, fmt.Errorf("running as root and there is no postgres user to run the server as")
		}
		rp, err := exec.LookPath("runuser")
		if err != nil {
			return "", nil, fmt.Errorf("running as root and runuser is missing")
		}
		runas = []string{rp, "-u", "postgres", "--"}
	}
	return bin, runas, nil
}

func tail(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 1000 {
		s = "…" + s[len(s)-1000:]
	}
	return s
}
