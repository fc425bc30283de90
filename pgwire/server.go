package pgwire

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tupled/tupled/sqlfe"
)

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("pgwire: server closed")

// Config configures a Server.
type Config struct {
	Engine *sqlfe.Engine // required
	// Password, when set, is required of every client through
	// SCRAM-SHA-256 (any user name). Empty: trust (allowed only on loopback:
	// the serve command refuses a non-loopback listener without one).
	Password string
	// TLS, when set, is offered to clients: an SSLRequest is answered 'S'
	// and the connection continues over TLS (tls.Server with this config).
	// Nil: SSLRequest is answered 'N' and clients stay on plain TCP.
	TLS *tls.Config
	// TLSRequired refuses a session whose StartupMessage did not arrive over
	// TLS with FATAL 28000, worded as PostgreSQL's for a pg_hba.conf with
	// only hostssl lines. A CancelRequest is still accepted over plain TCP
	// (libpq sends it so). Requires TLS: Serve rejects a Config with
	// TLSRequired and no TLS, which would refuse every client.
	TLSRequired bool
	// MaxConns bounds concurrent sessions (default 2000); beyond it a client
	// gets FATAL 53300 "sorry, too many clients already".
	MaxConns int
	// MaxMessageSize bounds one protocol message's body (default 16 MiB):
	// the per-connection input buffer never grows beyond it.
	MaxMessageSize int
	// ClientCheckInterval is how often a running statement checks that its
	// client is still connected (PostgreSQL's client_connection_check_interval);
	// default 1s, negative disables.
	ClientCheckInterval time.Duration
	Logger              *slog.Logger
	Metrics             *Metrics // optional
}

// Server serves the PostgreSQL protocol.
type Server struct {
	cfg Config
	log *slog.Logger

	mu       sync.Mutex
	lns      map[net.Listener]struct{}
	conns    map[*conn]struct{}
	byPID    map[int32]*conn
	shutting atomic.Bool
	sessions atomic.Int64
	nextPID  atomic.Int32
	wg       sync.WaitGroup
}

// New returns a server for cfg.
func New(cfg Config) *Server {
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 2000
	}
	if cfg.MaxMessageSize <= 0 {
		cfg.MaxMessageSize = 16 << 20
	}
	if cfg.ClientCheckInterval == 0 {
		cfg.ClientCheckInterval = time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, log: log, lns: map[net.Listener]struct{}{}, conns: map[*conn]struct{}{}, byPID: map[int32]*conn{}}
	s.nextPID.Store(10000)
	return s
}

// errTLSRequiredWithoutTLS is Serve's error for a Config with TLSRequired
// and no TLS.
var errTLSRequiredWithoutTLS = errors.New("pgwire: Config.TLSRequired is set without Config.TLS: every client would be refused")

// validate reports a Config that cannot serve any client.
func (cfg *Config) validate() error {
	if cfg.TLSRequired && cfg.TLS == nil {
		return errTLSRequiredWithoutTLS
	}
	return nil
}

// Serve accepts connections on ln until Shutdown (then it returns
// ErrServerClosed) or an accept error. An invalid Config (TLSRequired
// without TLS) is reported at once: ln is closed, no connection accepted.
func (s *Server) Serve(ln net.Listener) error {
	if err := s.cfg.validate(); err != nil {
		ln.Close()
		return err
	}
	s.mu.Lock()
	if s.shutting.Load() {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.lns[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.lns, ln)
		s.mu.Unlock()
	}()
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.shutting.Load() {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		c := &conn{srv: s, nc: nc}
		s.mu.Lock()
		if s.shutting.Load() {
			s.mu.Unlock()
			nc.Close()
			return ErrServerClosed
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go c.serve()
	}
}

func (s *Server) removeConn(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	if c.pid != 0 && s.byPID[c.pid] == c {
		delete(s.byPID, c.pid)
	}
	s.mu.Unlock()
	s.wg.Done()
}

// register gives c a backend pid and secret key.
func (s *Server) register(c *conn) {
	var b [4]byte
	_, _ = rand.Read(b[:])
	c.secret = b[:]
	s.mu.Lock()
	for {
		pid := s.nextPID.Add(1)
		if pid <= 0 {
			s.nextPID.Store(10000)
			continue
		}
		if _, used := s.byPID[pid]; !used {
			c.pid = pid
			break
		}
	}
	s.byPID[c.pid] = c
	s.mu.Unlock()
}

// cancel handles a CancelRequest: the statement running on the session
// with that pid and secret is cancelled (57014).
func (s *Server) cancel(pid uint32, secret []byte) {
	s.mu.Lock()
	c := s.byPID[int32(pid)]
	s.mu.Unlock()
	if c == nil || subtle.ConstantTimeCompare(c.secret, secret) != 1 {
		s.log.Debug("cancel request for unknown backend", "pid", pid)
		return
	}
	s.log.Debug("cancel request", "pid", pid)
	c.cancelStatement()
}

// Shutdown stops accepting, interrupts every session (a running statement
// is cancelled, an idle session gets FATAL 57P01), rolls back their open
// transactions, and waits for them to finish (or ctx: then it closes the
// remaining connections). The caller closes the DB afterwards.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.shutting.Store(true)
	for ln := range s.lns {
		ln.Close()
	}
	// Running statements are cancelled before any idle session is woken:
	// an idle session's rollback would otherwise grant a lock to a waiter
	// not yet told to stop.
	for c := range s.conns {
		c.cancelStatement()
	}
	for c := range s.conns {
		c.interrupt()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		for c := range s.conns {
			c.nc.Close()
		}
		s.mu.Unlock()
		<-done
		return ctx.Err()
	}
}

// admit takes a session slot unless MaxConns are taken.
func (s *Server) admit() bool {
	for {
		n := s.sessions.Load()
		if int(n) >= s.cfg.MaxConns {
			return false
		}
		if s.sessions.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Sessions is the number of established sessions (counting those whose
// startup has passed the connection limit).
func (s *Server) Sessions() int { return int(s.sessions.Load()) }
