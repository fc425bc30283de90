package main

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/tupled/tupled"
	"github.com/tupled/tupled/pgwire"
	"github.com/tupled/tupled/sqlfe"
)

func init() {
	register(&command{
		name:    "serve",
		summary: "serve the PostgreSQL wire protocol over a database",
		usage:   "[--data DIR] [--listen ADDR] [--metrics ADDR [--metrics-insecure]] [--password-file FILE] [--tls-cert FILE --tls-key FILE [--tls-required]] [flags]",
		help: `
Serve opens the database in --data and speaks the PostgreSQL protocol on
--listen, so psql, pgbench, isolationtester and any PostgreSQL driver can
use it:

  tupled serve --data /var/lib/tupled
  psql "host=127.0.0.1 port=5433 user=me dbname=tupled"

Without --data (or with --data '') the database is IN MEMORY: everything is
lost when the server stops, and serve says so on stderr at start.

SQL is parsed by PostgreSQL's own parser. What runs: CREATE [TEMP]/DROP TABLE
(smallint, integer, bigint, numeric[(p,s)], real, double precision, text,
varchar, char, boolean, date, timestamp, timestamptz, uuid, bytea, json,
jsonb, serial and
GENERATED ... AS IDENTITY columns; primary keys of one or more columns,
UNIQUE, NOT NULL, DEFAULT, CHECK, REFERENCES), CREATE/DROP INDEX,
CREATE/ALTER/DROP SEQUENCE (nextval, currval, setval, lastval), ALTER
TABLE (ADD PRIMARY KEY, ADD/DROP/RENAME COLUMN, ALTER COLUMN TYPE,
ADD/DROP CONSTRAINT: FOREIGN KEY, CHECK), COMMENT ON; INSERT (ON
CONFLICT, RETURNING), UPDATE [FROM], DELETE [USING], and SELECT with joins, aggregates, GROUP BY, DISTINCT,
window functions, subqueries, set operations and WITH [RECURSIVE], and
FOR KEY SHARE|SHARE|NO KEY UPDATE|UPDATE [OF t] [NOWAIT|SKIP LOCKED] on
tables and joins;
COPY FROM STDIN and TO STDOUT (text, csv, binary: psql's \copy),
TRUNCATE, VACUUM; transactions, savepoints, cursors, LOCK TABLE,
PREPARE/EXECUTE, SET/SHOW, EXPLAIN; pg_catalog and information_schema
(psql's \d family), pg_locks, pgrowlocks('t') and the pg_advisory_lock family. Anything else
fails with SQLSTATE 0A000 naming the construct. README.md, "The SQL it
understands", has the details.

Without a password clients are trusted, which is only allowed on a loopback
address; with one every client authenticates with SCRAM-SHA-256. Give the
password in a file (--password-file, its first line) or in the environment
(TUPLED_PASSWORD); --password on the command line still works but is
deprecated: other users of the machine see it in ps. With --tls-cert and --tls-key (PEM files) clients may use TLS
(sslmode=require, verify-ca, verify-full); --tls-required refuses those that
do not (28000), as a pg_hba.conf with only hostssl lines would. SIGTERM or
SIGINT shuts down gracefully: stop accepting, roll back open transactions,
checkpoint and close the database. --metrics serves Prometheus metrics at
/metrics: beyond loopback only with a password (then scrapers authenticate
with HTTP basic auth, any user name and the password) or with
--metrics-insecure (no authentication: anyone who reaches the address reads
the metrics).

Limits: a startup packet is at most 10000 bytes, an authentication message
65535, a Query, Parse or Bind --max-message-size; a connection must finish
its startup (TLS handshake and authentication) within
--authentication-timeout, and at most --max-startup-connections may be in
their startup at once (beyond: 53300). Accept errors such as EMFILE are
retried with a back-off; at start the soft limit of open files is raised to
the hard limit.`,
		run: runServe,
	})
}

func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// resolvePassword picks the server password: --password-file (its first
// line), else --password, else $TUPLED_PASSWORD; source names where it
// came from (for the log, never the value).
func resolvePassword(flagValue string, flagSet bool, file string) (pw, source string, err error) {
	switch {
	case file != "" && flagSet:
		return "", "", usagef("--password and --password-file exclude each other")
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", "", fmt.Errorf("reading --password-file: %w", err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		line = strings.TrimSuffix(line, "\r")
		if line == "" {
			return "", "", usagef("--password-file %s: the first line is empty", file)
		}
		return line, "file", nil
	case flagSet:
		if flagValue == "" {
			return "", "", usagef("--password is empty")
		}
		return flagValue, "command line", nil
	}
	if env := os.Getenv("TUPLED_PASSWORD"); env != "" {
		return env, "TUPLED_PASSWORD", nil
	}
	return "", "none", nil
}

// basicAuth requires HTTP basic authentication with password (any user
// name) before h.
func basicAuth(h http.Handler, password string) http.Handler {
	want := sha256.Sum256([]byte(password))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, got, ok := r.BasicAuth()
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="tupled metrics"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// raiseFileLimit raises the soft limit of open files (RLIMIT_NOFILE) to
// the hard limit, so that connections are bounded by --max-connections
// rather than by a small default soft limit, and returns the limit now in
// force. (Go raises it too when package os starts; this does not rely on
// that.)
func raiseFileLimit() (uint64, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, err
	}
	if rl.Cur < rl.Max {
		rl.Cur = rl.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			return 0, err
		}
	}
	return rl.Cur, nil
}

// inMemoryBanner is what serve prints on stderr at start without --data
// (with --log-format text; JSON logs get only the warning record).
const inMemoryBanner = `
**********************************************************************
WARNING: running IN MEMORY: no --data given, everything is lost when
the server stops. Give --data DIR to keep the database on disk.
**********************************************************************

`

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := commands["serve"]
	fs := newFlagSet(c)
	data := fs.String("data", "", "database directory (empty: IN MEMORY, lost when the server stops)")
	listen := fs.String("listen", "127.0.0.1:5433", "address to serve the PostgreSQL protocol on")
	metricsAddr := fs.String("metrics", "", "address to serve Prometheus /metrics on (empty: off)")
	metricsInsecure := fs.Bool("metrics-insecure", false, "allow --metrics beyond loopback without a password (no authentication)")
	// The default is not shown in --help: it would print $TUPLED_PASSWORD.
	password := fs.String("password", "", "require SCRAM-SHA-256 with this password (deprecated: visible in ps; use --password-file or $TUPLED_PASSWORD)")
	passwordFile := fs.String("password-file", "", "require SCRAM-SHA-256 with the password on the first line of this file")
	maxConns := fs.Int("max-connections", 2000, "maximum concurrent sessions (beyond: 53300)")
	maxStartup := fs.Int("max-startup-connections", 0, "maximum connections still in startup/authentication (0: --max-connections; beyond: 53300)")
	authTimeout := fs.Duration("authentication-timeout", time.Minute, "time a connection has to finish TLS, startup and authentication")
	deadlockTimeout := fs.Duration("deadlock-timeout", time.Second, "deadlock_timeout of the database (fixed at start)")
	lockTimeout := fs.Duration("lock-timeout", 0, "default lock_timeout (0: none)")
	backend := fs.String("backend", "pebble", "storage backend of an on-disk database: pebble or bbolt")
	syncCommit := fs.Bool("sync-commit", true, "commit returns after the WAL is fsynced")
	maxMsg := fs.Int("max-message-size", 16<<20, "largest Query, Parse or Bind message accepted (bytes; other messages have PostgreSQL's smaller limits)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	logFormat := fs.String("log-format", "text", "text or json")
	tlsCert := fs.String("tls-cert", "", "PEM certificate (chain) file: offer TLS to clients (with --tls-key)")
	tlsKey := fs.String("tls-key", "", "PEM private key file of --tls-cert")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile (go tool pprof) of the server's whole run to this file, closed at shutdown")
	tlsRequired := fs.Bool("tls-required", false, "refuse clients that do not use TLS (28000); needs --tls-cert and --tls-key")
	if err := parseFlags(c, fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return usagef("bad --log-level %q", *logLevel)
	}
	hopts := &slog.HandlerOptions{Level: level}
	var log *slog.Logger
	switch *logFormat {
	case "text":
		log = slog.New(slog.NewTextHandler(stderr, hopts))
	case "json":
		log = slog.New(slog.NewJSONHandler(stderr, hopts))
	default:
		return usagef("bad --log-format %q", *logFormat)
	}
	opts := &tupled.Options{DeadlockTimeout: *deadlockTimeout, LockTimeout: *lockTimeout, SyncCommit: syncCommit, Logger: log.With("component", "engine")}
	switch *backend {
	case "pebble":
		opts.Backend = tupled.Pebble
	case "bbolt":
		opts.Backend = tupled.Bbolt
	default:
		return usagef("bad --backend %q", *backend)
	}
	passwordOnCommandLine := false
	fs.Visit(func(f *flag.Flag) { passwordOnCommandLine = passwordOnCommandLine || f.Name == "password" })
	pw, pwSource, err := resolvePassword(*password, passwordOnCommandLine, *passwordFile)
	if err != nil {
		return err
	}
	if pw == "" && !isLoopback(*listen) {
		return usagef("listening on %s, beyond loopback, requires a password (--password-file or TUPLED_PASSWORD; SCRAM-SHA-256)", *listen)
	}
	if *metricsAddr != "" && !isLoopback(*metricsAddr) && pw == "" && !*metricsInsecure {
		return usagef("--metrics on %s, beyond loopback, requires a password (scrapers then use HTTP basic auth) or --metrics-insecure", *metricsAddr)
	}
	if *authTimeout <= 0 {
		return usagef("bad --authentication-timeout %s: must be positive", *authTimeout)
	}
	if (*tlsCert == "") != (*tlsKey == "") {
		return usagef("--tls-cert and --tls-key go together")
	}
	if *tlsRequired && *tlsCert == "" {
		return usagef("--tls-required needs --tls-cert and --tls-key")
	}
	var tlsConfig *tls.Config
	tlsMode := "off"
	if *tlsCert != "" {
		pair, err := tls.LoadX509KeyPair(*tlsCert, *tlsKey)
		if err != nil {
			return fmt.Errorf("loading --tls-cert %s and --tls-key %s: %w", *tlsCert, *tlsKey, err)
		}
		// TLS 1.2 at least, as PostgreSQL's ssl_min_protocol_version
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
		tlsMode = map[bool]string{true: "required", false: "on"}[*tlsRequired]
	}

	if passwordOnCommandLine {
		log.Warn("--password on the command line is visible to other users of the machine (ps); use --password-file or TUPLED_PASSWORD")
	}
	nofile, err := raiseFileLimit()
	if err != nil {
		log.Warn("could not raise the open files limit", "err", err)
	} else if want := uint64(2*(*maxConns) + 64); nofile < want {
		log.Warn("the open files limit is below what --max-connections may need; accept will back off when it runs out", "nofile", nofile, "want", want)
	} else {
		log.Debug("open files limit", "nofile", nofile)
	}

	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()

	db, err := tupled.Open(*data, opts)
	if err != nil {
		return err
	}
	closeDB := func() error {
		if err := db.Close(); err != nil {
			log.Error("closing the database", "err", err)
			return err
		}
		return nil
	}
	eng, err := sqlfe.NewExecutor(ctx, db, &sqlfe.ExecutorOptions{DeadlockTimeout: *deadlockTimeout, Logger: log})
	if err != nil {
		closeDB()
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics := pgwire.NewMetrics(reg, db)
	srv := pgwire.New(pgwire.Config{Executor: eng, Password: pw, TLS: tlsConfig, TLSRequired: *tlsRequired, MaxConns: *maxConns, MaxStartupConns: *maxStartup,
		AuthTimeout: *authTimeout, MaxMessageSize: *maxMsg, Logger: log.With("component", "pgwire"), Metrics: metrics})

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		closeDB()
		return err
	}
	var msrv *http.Server
	if *metricsAddr != "" {
		mln, err := net.Listen("tcp", *metricsAddr)
		if err != nil {
			ln.Close()
			closeDB()
			return err
		}
		mux := http.NewServeMux()
		var h http.Handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
		if pw != "" && !isLoopback(*metricsAddr) {
			h = basicAuth(h, pw)
		}
		mux.Handle("/metrics", h)
		msrv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := msrv.Serve(mln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("metrics server", "err", err)
			}
		}()
		log.Info("metrics", "addr", mln.Addr().String())
	}
	where := *data
	if where == "" {
		where = "(in memory)"
		if *logFormat == "text" {
			fmt.Fprint(stderr, inMemoryBanner)
		}
		log.Warn("running in memory: no --data given, everything is lost when the server stops")
	}
	log.Info("serving", "addr", ln.Addr().String(), "data", where, "auth", map[bool]string{true: "scram-sha-256", false: "trust"}[pw != ""], "password", pwSource, "tls", tlsMode)
	fmt.Fprintf(stdout, "tupled serve: listening on %s\n", ln.Addr())

	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return err
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	var serveErr error
	select {
	case <-ctx.Done():
		log.Info("shutting down", "sessions", srv.Sessions())
	case serveErr = <-errc:
		log.Error("accept failed", "err", serveErr)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("sessions did not end in time; connections closed", "err", err)
	}
	if serveErr == nil {
		<-errc
	}
	if msrv != nil {
		_ = msrv.Shutdown(sctx)
	}
	if err := closeDB(); err != nil {
		return err
	}
	log.Info("stopped")
	if serveErr != nil && !errors.Is(serveErr, pgwire.ErrServerClosed) {
		return serveErr
	}
	return nil
}
