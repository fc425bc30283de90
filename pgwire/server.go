package pgwire

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/tupled/tupled/sqlfe"
)

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("pgwire: server closed")

// Config configures a Server.
type Config struct {
	Executor *sqlfe.Executor // required
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
	// MaxMessageSize bounds the body of a Query, Parse, Bind (default
	// 16 MiB). Other messages are bounded as in PostgreSQL: a startup
	// packet to 10000 bytes, an authentication message to 65535, Sync,
	// Execute, Describe, Close, Flush and Terminate to 10000. Every limit
	// is checked on the length word, before the body is read; a body's
	// buffer grows only as its bytes arrive, and a connection keeps no
	// input or output buffer above 8 KiB between messages.
	MaxMessageSize int
	// AuthTimeout bounds the startup phase of a connection: the TLS
	// handshake, the startup packet and authentication must be done
	// within it, or the connection is closed (PostgreSQL's
	// authentication_timeout; default 60s).
	AuthTimeout time.Duration
	// MaxStartupConns bounds the connections still in their startup phase
	// (not yet authenticated), which do not hold a MaxConns slot until
	// their startup packet is read (default MaxConns, so that at most
	// 2*MaxConns connections are open, as PostgreSQL's postmaster caps
	// its children). Beyond it a new connection gets FATAL 53300 at once
	// and is closed.
	MaxStartupConns int
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
	starting atomic.Int64 // connections in their startup phase
	refusing atomic.Int64 // goroutines refusing a connection (refuse)
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
	if cfg.AuthTimeout <= 0 {
		cfg.AuthTimeout = time.Minute
	}
	if cfg.MaxStartupConns <= 0 {
		cfg.MaxStartupConns = cfg.MaxConns
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
// ErrServerClosed) or an accept error that retrying cannot cure. An
// invalid Config (TLSRequired without TLS) is reported at once: ln is
// closed, no connection accepted.
//
// A failed accept that can pass (no file descriptor left, EMFILE/ENFILE;
// no buffer or memory; a connection aborted before it was accepted; a
// timeout) is retried after a back-off, as net/http's Server does: 5ms,
// doubling to 1s, reset by the next accepted connection. The server goes
// on serving its sessions meanwhile and accepts again once descriptors
// are freed.
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
			if retryableAccept(err) {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				s.cfg.Metrics.acceptFailed()
				s.log.Warn("accept failed; retrying", "err", err, "delay", delay, "sessions", s.sessions.Load(), "starting", s.starting.Load())
				if testHookAcceptRetry != nil {
					testHookAcceptRetry(err)
				}
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		if s.starting.Add(1) > int64(s.cfg.MaxStartupConns) {
			s.starting.Add(-1)
			s.refuse(nc)
			continue
		}
		c := &conn{srv: s, nc: nc, starting: true}
		s.mu.Lock()
		if s.shutting.Load() {
			s.mu.Unlock()
			s.starting.Add(-1)
			nc.Close()
			return ErrServerClosed
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go c.serve()
	}
}

// testHookAcceptRetry, set by tests only, is called as Serve retries a
// failed accept.
var testHookAcceptRetry func(err error)

// retryableAccept reports an accept error that a later accept may not
// have: net/http's Temporary errors, named.
func retryableAccept(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EINTR, syscall.EAGAIN, syscall.EPROTO} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// maxRefusing bounds the goroutines that answer refused connections; past
// it a refused connection is closed without an answer.
const maxRefusing = 64

// refuse answers a connection beyond MaxStartupConns with FATAL 53300 and
// closes it. The message is written at once (the client reads it as the
// answer to its startup packet); the rest of what the client sends is
// drained for at most a second so that closing does not reset the
// connection before the client has read the message.
func (s *Server) refuse(nc net.Conn) {
	s.cfg.Metrics.rejected()
	s.log.Warn("too many connections in startup", "max", s.cfg.MaxStartupConns, "remote", nc.RemoteAddr().String())
	if s.refusing.Add(1) > maxRefusing {
		s.refusing.Add(-1)
		nc.Close()
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.refusing.Add(-1)
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(time.Second))
		msg, _ := (&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: "53300", Message: "sorry, too many clients already"}).Encode(nil)
		if _, err := nc.Write(msg); err != nil {
			return
		}
		if cw, ok := nc.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(nc, 64<<10))
	}()
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
