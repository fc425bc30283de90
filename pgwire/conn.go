package pgwire

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
	"github.com/tupled/tupled/sqlfe"
)

// conn is one client connection. One goroutine (serve) reads its messages
// and runs its statements; other goroutines only cancel the running
// statement (CancelRequest, shutdown, the client-check timer).
//
// A panic anywhere in that goroutine (a bug, or one that a library raised
// in a statement) ends the connection, not the process: serve recovers it,
// logs the stack, sends FATAL XX000 if the connection can still carry it,
// rolls the session's transaction back and releases its slot.
type conn struct {
	srv *Server
	// nc is the TCP connection: deadlines, the client check and a forced
	// close act on it, TLS or not.
	nc net.Conn
	// tls is the TLS connection over nc once negotiated; the backend
	// (be) then reads and writes through it.
	tls        *tls.Conn
	be         *backend
	pid        int32
	secret     []byte
	sess       *sqlfe.Session
	sessClosed bool
	admitted   bool // holds a slot in srv.sessions
	starting   bool // holds a slot in srv.starting (startup not finished)

	mu        sync.Mutex
	ctx       context.Context // cancelled at shutdown
	cancelCtx context.CancelFunc
	running   context.CancelFunc // the running statement's, nil when idle

	stmts          map[string]*sqlfe.Stmt // nil value: an empty query
	portals        map[string]*portal
	ignoreTillSync bool
	// copyErr: the connection broke during a COPY FROM STDIN (copy.go);
	// the message loop ends the session with it
	copyErr error

	// LISTEN's notifications reach an idle session as they come: wmu
	// orders the writes of the message loop and of notifier, which writes
	// only while idle (from a ReadyForQuery outside a transaction block
	// to the next message the loop reads, when the loop writes nothing).
	wmu      sync.Mutex
	idle     bool
	notifyCh chan struct{}
}

type portal struct {
	st      *sqlfe.Stmt
	params  []types.Value
	formats []int16
	res     *sqlfe.Result
	pos     int
}

func (c *conn) interrupt() {
	c.mu.Lock()
	if c.cancelCtx != nil {
		c.cancelCtx()
	}
	if c.running != nil {
		c.running()
	}
	c.mu.Unlock()
	_ = c.nc.SetReadDeadline(time.Now())
}

func (c *conn) cancelStatement() {
	c.mu.Lock()
	if c.running != nil {
		c.running()
	}
	c.mu.Unlock()
}

// testHookMessage, set by tests only (before the server starts), is called
// by the session's goroutine before it handles each message.
var testHookMessage func(c *conn, msg pgproto3.FrontendMessage)

func (c *conn) serve() {
	defer c.srv.removeConn(c)
	defer c.nc.Close()
	defer func() {
		if c.tls != nil {
			_ = c.tls.Close() // close_notify, then nc
		}
	}()
	c.mu.Lock()
	c.ctx, c.cancelCtx = context.WithCancel(context.Background())
	c.mu.Unlock()
	defer c.cancelCtx()
	defer c.endStartup()
	defer func() {
		if c.admitted {
			c.srv.sessions.Add(-1)
		}
	}()
	defer c.recoverPanic()
	defer c.closeSession() // a session refused during startup too
	if c.srv.shutting.Load() {
		return
	}
	c.be = newBackend(c.nc, c.nc, c.srv.cfg.MaxMessageSize)
	if !c.startup() {
		return
	}
	m := c.srv.cfg.Metrics
	m.connOpened(c.tls != nil)
	defer m.connClosed()
	c.notifyCh = make(chan struct{}, 1)
	c.sess.OnNotify(func() {
		select {
		case c.notifyCh <- struct{}{}:
		default:
		}
	})
	go c.notifier(c.ctx)
	c.loop()
}

// endStartup releases the connection's slot among those in startup.
func (c *conn) endStartup() {
	if c.starting {
		c.starting = false
		c.srv.starting.Add(-1)
	}
}

// closeSession rolls back the session's transaction and unregisters it,
// once; a panic in doing so is logged, not raised again.
func (c *conn) closeSession() {
	if c.sess == nil || c.sessClosed {
		return
	}
	c.sessClosed = true
	defer func() {
		if r := recover(); r != nil {
			c.srv.log.Error("panic while closing a session", "pid", c.pid, "panic", r, "stack", string(debug.Stack()))
		}
	}()
	c.sess.Close()
}

// recoverPanic ends a connection whose goroutine panicked: the stack is
// logged, the client gets FATAL XX000 (under a short write deadline: a
// client that does not read cannot hold the goroutine), and the session
// is closed (its transaction rolled back) if the deferred close did not
// already run.
func (c *conn) recoverPanic() {
	r := recover()
	if r == nil {
		return
	}
	c.srv.cfg.Metrics.panicked()
	c.srv.log.Error("panic in a connection; the connection is closed", "pid", c.pid, "remote", c.nc.RemoteAddr().String(), "panic", r, "stack", string(debug.Stack()))
	c.closeSession()
	if c.be == nil {
		return
	}
	func() {
		defer func() { _ = recover() }() // the backend may be what broke
		_ = c.nc.SetWriteDeadline(time.Now().Add(time.Second))
		c.be.reset()
		c.be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: pgerror.CodeInternal,
			Message: "terminating connection because of an internal error", Detail: fmt.Sprintf("panic: %v", r)})
		_ = c.be.Flush()
	}()
}

func (c *conn) fatal(code, msg string) {
	c.be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: code, Message: msg})
	_ = c.be.Flush()
}

// readFailed handles an error reading a message: a protocol violation gets
// its FATAL 08P01 before the connection closes; a client gone (EOF, reset,
// a read deadline) gets nothing, as in PostgreSQL.
func (c *conn) readFailed(err error, phase string) {
	var pe *protocolError
	if errors.As(err, &pe) {
		c.srv.log.Warn("protocol violation", "phase", phase, "pid", c.pid, "remote", c.nc.RemoteAddr().String(), "err", err)
		c.fatal(pgerror.CodeProtocolViolation, pe.msg)
		return
	}
	c.srv.log.Debug("connection read ended", "phase", phase, "pid", c.pid, "remote", c.nc.RemoteAddr().String(), "tls", c.tls != nil, "err", err)
}

// startup runs the startup and authentication phase, under the
// authentication timeout (TLS handshake included), and bounded in the
// messages it reads: a startup packet to maxStartupPacketLen, an
// authentication message to maxAuthMessageLen.
func (c *conn) startup() bool {
	defer c.endStartup()
	_ = c.nc.SetDeadline(time.Now().Add(c.srv.cfg.AuthTimeout))
	var sm *startupPacket
	// As PostgreSQL: one SSLRequest and one GSSENCRequest at most, and none
	// after TLS is in use.
	sslDone, gssDone := false, false
	for sm == nil {
		p, err := readStartupPacket(c.be.rd)
		if err != nil {
			c.readFailed(err, "startup")
			return false
		}
		switch p.code {
		case sslRequestCode:
			if sslDone {
				c.fatal("0A000", "unsupported frontend protocol 1234.5679: server supports 3.0 to 3.0")
				return false
			}
			sslDone = true
			if !c.answerSSL() {
				return false
			}
		case gssEncRequestCode:
			if gssDone || c.tls != nil {
				c.fatal("0A000", "unsupported frontend protocol 1234.5680: server supports 3.0 to 3.0")
				return false
			}
			gssDone = true
			if _, err := c.nc.Write([]byte{'N'}); err != nil {
				return false
			}
		case cancelRequestCode:
			c.srv.cancel(p.pid, p.secret)
			return false
		default:
			if p.code>>16 != 3 {
				c.unsupportedProtocol(p.code)
				return false
			}
			sm = p
		}
	}
	// PostgreSQL 15 speaks 3.0: a newer minor version, or _pq_ protocol
	// options, get NegotiateProtocolVersion (newest minor 0 and the options
	// not recognised, which is all of them) and the session goes on in 3.0.
	var unknown []string
	for _, k := range sm.order {
		if strings.HasPrefix(k, "_pq_.") {
			unknown = append(unknown, k)
		}
	}
	if sm.code&0xffff > 0 || len(unknown) > 0 {
		c.be.Send(&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0, UnrecognizedOptions: unknown})
	}
	user := sm.params["user"]
	if user == "" {
		c.fatal("28000", "no PostgreSQL user name specified in startup packet")
		return false
	}
	if c.srv.cfg.TLSRequired && c.tls == nil {
		db := sm.params["database"]
		if db == "" {
			db = user
		}
		host, _, err := net.SplitHostPort(c.nc.RemoteAddr().String())
		if err != nil {
			host = c.nc.RemoteAddr().String()
		}
		c.srv.cfg.Metrics.refusedNoTLS()
		c.srv.log.Info("connection without TLS refused", "user", user, "database", db, "remote", c.nc.RemoteAddr().String())
		c.fatal("28000", fmt.Sprintf("no pg_hba.conf entry for host \"%s\", user \"%s\", database \"%s\", no encryption", host, user, db))
		return false
	}
	// The slot is taken here, before the client can see ReadyForQuery, so
	// Sessions() never lags behind what a client observes and concurrent
	// startups cannot overshoot MaxConns.
	if c.admitted = c.srv.admit(); !c.admitted {
		c.srv.cfg.Metrics.rejected()
		c.srv.log.Warn("too many clients", "max", c.srv.cfg.MaxConns, "remote", c.nc.RemoteAddr().String())
		c.fatal("53300", "sorry, too many clients already")
		return false
	}
	if pw := c.srv.cfg.Password; pw != "" {
		if err := c.scramAuth(pw); err != nil {
			var pe *protocolError
			switch {
			case errors.As(err, &pe):
				c.readFailed(err, "authentication")
			case errors.Is(err, errAuth):
				c.srv.log.Info("authentication failed", "user", user, "remote", c.nc.RemoteAddr().String(), "err", err)
				c.fatal("28P01", fmt.Sprintf("password authentication failed for user %q", user))
			default:
				c.srv.log.Debug("authentication ended", "user", user, "remote", c.nc.RemoteAddr().String(), "err", err)
			}
			return false
		}
	}
	c.be.auth = false
	_ = c.nc.SetDeadline(time.Time{})
	c.endStartup()
	if c.srv.shutting.Load() {
		c.fatal("57P03", "the database system is shutting down")
		return false
	}
	c.srv.register(c)
	c.be.Send(&pgproto3.AuthenticationOk{})
	// As PostgreSQL's process_startup_options, after AuthenticationOk: the
	// options switches (a malformed one is FATAL 42601), then the other
	// startup parameters, each applied as SET would; a value SET refuses
	// ends the connection.
	opts, err := parseOptions(sm.params["options"])
	if err != nil {
		c.sendError(err)
		_ = c.be.Flush()
		return false
	}
	// the database named at startup is current_database() and pg_database's one row
	c.sess = c.srv.cfg.Executor.NewSession(c.pid, user, map[string]string{"database": sm.params["database"]})
	c.sess.SetCopyIO(copyIO{c}) // copy.go
	for _, kv := range opts {
		if !c.startupSetting(kv[0], kv[1]) {
			return false
		}
	}
	appName := ""
	for _, k := range sm.order {
		switch {
		case k == "user", k == "database", k == "options", k == "replication", strings.HasPrefix(k, "_pq_."):
			continue
		case k == "application_name":
			appName = sm.params[k]
		}
		if !c.startupSetting(k, sm.params[k]) {
			return false
		}
	}
	c.sess.Notice = func(e *pgerror.Error) {
		c.be.Send(&pgproto3.NoticeResponse{Severity: e.Severity, SeverityUnlocalized: e.Severity, Code: e.Code, Message: e.Message, Detail: e.Detail, Hint: e.Hint})
	}
	c.sess.ParamStatus = func(name, value string) {
		c.be.Send(&pgproto3.ParameterStatus{Name: name, Value: value})
	}
	for _, kv := range c.sess.Reported() {
		c.be.Send(&pgproto3.ParameterStatus{Name: kv[0], Value: kv[1]})
	}
	c.be.Send(&pgproto3.BackendKeyData{ProcessID: uint32(c.pid), SecretKey: c.secret})
	c.be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	if err := c.be.Flush(); err != nil {
		return false
	}
	c.idle = true // (no notifier yet)
	c.stmts = map[string]*sqlfe.Stmt{}
	c.portals = map[string]*portal{}
	tlsVersion := "off"
	if c.tls != nil {
		tlsVersion = tls.VersionName(c.tls.ConnectionState().Version)
	}
	c.srv.log.Debug("session started", "pid", c.pid, "user", user, "remote", c.nc.RemoteAddr().String(), "application_name", appName, "tls", tlsVersion)
	return true
}

// unsupportedProtocol refuses a StartupMessage of a protocol major version
// other than 3, worded as PostgreSQL 15's; to a 1.x or 2.x client in the
// old protocol's error format ('E', then a NUL-terminated text), as
// PostgreSQL does.
func (c *conn) unsupportedProtocol(code uint32) {
	msg := fmt.Sprintf("unsupported frontend protocol %d.%d: server supports 3.0 to 3.0", code>>16, code&0xffff)
	c.srv.log.Info("unsupported frontend protocol", "remote", c.nc.RemoteAddr().String(), "version", fmt.Sprintf("%d.%d", code>>16, code&0xffff))
	if code>>16 < 3 {
		_, _ = c.nc.Write(append([]byte("EFATAL:  "+msg+"\n"), 0))
		return
	}
	c.fatal(pgerror.CodeFeatureNotSupp, msg)
}

// startupSetting applies a startup parameter or an options switch as
// "SET name TO 'value'" would, and answers as PostgreSQL's
// process_startup_options: a name PostgreSQL does not have is FATAL 42704,
// an invalid value FATAL 22023, a parameter that cannot change in a session
// (max_connections, log_timezone, block_size) FATAL 55P02. What PostgreSQL
// accepts but tupled does not implement is ignored (logged): a parameter
// SET refuses with 0A000 (enable_hashjoin, client_encoding other than
// UTF8), and one PostgreSQL allows only at connection start (the backend
// contexts: log_connections), which tupled has no use for.
func (c *conn) startupSetting(name, value string) bool {
	err := c.set(name, value)
	if err == nil {
		return true
	}
	e := sqlfe.ToError(err)
	backendOnly := func() bool {
		ctx := sqlfe.SettingContext(name)
		return e.Code == pgerror.CodeCantChangeRuntime && (ctx == "backend" || ctx == "superuser-backend")
	}
	if e.Code == pgerror.CodeFeatureNotSupp || backendOnly() {
		c.srv.log.Info("startup parameter ignored", "pid", c.pid, "name", name, "err", e.Message)
		return true
	}
	c.sendError(&pgerror.Error{Severity: "FATAL", Code: e.Code, Message: e.Message, Detail: e.Detail, Hint: e.Hint})
	_ = c.be.Flush()
	return false
}

// set runs SET name TO 'value' on the session, in a group of its own.
func (c *conn) set(name, value string) error {
	sts, err := sqlfe.Parse("SET " + quoteIdent(name) + " TO " + quoteLiteral(value))
	if err != nil {
		return err
	}
	for _, st := range sts {
		if _, err := c.sess.Execute(c.ctx, st, nil); err != nil {
			c.sess.Abort()
			return err
		}
	}
	return c.sess.EndGroup()
}

func quoteIdent(s string) string   { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// answerSSL answers an SSLRequest: 'N' without TLS configured; else 'S',
// the TLS handshake (under the startup deadline and the connection's
// context), and a backend over the TLS connection. False: the connection
// is to be closed.
func (c *conn) answerSSL() bool {
	cfg := c.srv.cfg.TLS
	if cfg == nil {
		_, err := c.nc.Write([]byte{'N'})
		return err == nil
	}
	if c.be.rd.Buffered() > 0 {
		// Bytes after the SSLRequest sit in the plain reader's buffer: a
		// client must wait for 'S' before its handshake, and whatever it sent
		// unencrypted must not pass for TLS data (PostgreSQL's check,
		// CVE-2021-23214). Sent in plain text, as PostgreSQL does.
		c.be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: pgerror.CodeProtocolViolation,
			Message: "received unencrypted data after SSL request",
			Detail:  "This could be either a client-software bug or evidence of an attempted man-in-the-middle attack."})
		_ = c.be.Flush()
		return false
	}
	if _, err := c.nc.Write([]byte{'S'}); err != nil {
		return false
	}
	tc := tls.Server(c.nc, cfg)
	if err := tc.HandshakeContext(c.ctx); err != nil {
		c.srv.cfg.Metrics.tlsHandshakeFailed()
		c.srv.log.Debug("TLS handshake failed", "remote", c.nc.RemoteAddr().String(), "err", err)
		return false
	}
	c.tls = tc
	c.be = newBackend(tc, tc, c.srv.cfg.MaxMessageSize)
	return true
}

func (c *conn) loop() {
	for {
		if c.copyErr != nil {
			c.readFailed(c.copyErr, "copy")
			return
		}
		msg, err := c.be.Receive()
		c.wmu.Lock()
		c.idle = false
		c.wmu.Unlock()
		if err != nil {
			var pe *protocolError
			switch {
			case c.srv.shutting.Load():
				c.fatal("57P01", "terminating connection due to administrator command")
			case errors.As(err, &pe) && !pe.fatal:
				// A malformed body whose length was right: an ERROR, and the
				// session goes on (PostgreSQL's pq_getmsg* errors). Within
				// the extended protocol, messages up to Sync are skipped.
				if c.ignoreTillSync && pe.typ != 'S' {
					continue
				}
				c.srv.log.Warn("malformed message", "pid", c.pid, "type", string(pe.typ), "err", err)
				switch pe.typ {
				case 'Q', 'F', 'S':
					c.ignoreTillSync = false
					c.sess.Abort()
					c.sendError(&pgerror.Error{Code: pgerror.CodeProtocolViolation, Message: pe.msg})
					c.ready()
				case 'd', 'c', 'f':
					// ignored outside COPY, malformed or not
				default:
					c.extError(&pgerror.Error{Code: pgerror.CodeProtocolViolation, Message: pe.msg})
				}
				continue
			default:
				c.readFailed(err, "session")
			}
			return
		}
		if testHookMessage != nil {
			testHookMessage(c, msg)
		}
		if c.ignoreTillSync {
			switch msg.(type) {
			case *pgproto3.Sync:
			case *pgproto3.Terminate:
				return
			default:
				continue
			}
		}
		switch m := msg.(type) {
		case *pgproto3.Query:
			c.simpleQuery(m.String)
		case *pgproto3.Parse:
			c.parse(m)
		case *pgproto3.Bind:
			c.bind(m)
		case *pgproto3.Describe:
			c.describe(m)
		case *pgproto3.Execute:
			c.execute(m)
		case *pgproto3.Close:
			c.closeMsg(m)
		case *pgproto3.Sync:
			c.sync()
		case *pgproto3.Flush:
			if c.be.Flush() != nil {
				return
			}
		case *pgproto3.Terminate:
			return
		case *pgproto3.FunctionCall:
			c.sess.Abort()
			c.sendError(&pgerror.Error{Code: pgerror.CodeFeatureNotSupp, Message: "fastpath function calls are not supported"})
			c.ready()
		case *pgproto3.CopyData, *pgproto3.CopyDone, *pgproto3.CopyFail:
			// Outside COPY these are ignored, as PostgreSQL does: a client
			// may still be sending data after a COPY failed.
		}
		if err := c.be.encErr; err != nil {
			// A message could not be encoded (a limit checked too late):
			// the output stream would be inconsistent. End the session.
			c.srv.log.Error("cannot encode a message", "pid", c.pid, "err", err)
			c.be.reset()
			c.fatal(pgerror.CodeInternal, "could not encode a protocol message: "+err.Error())
			return
		}
	}
}

// wireError is the ErrorResponse for err: sqlfe's mapping, which keeps
// an engine error's SQLSTATE (53100 disk full among them) as it is; an
// error that reached the wire without one but is a full disk (ENOSPC,
// EDQUOT) is 53100 as in PostgreSQL, not an internal error.
func wireError(err error) *pgerror.Error {
	e := sqlfe.ToError(err)
	if e.Code == pgerror.CodeInternal && (errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)) {
		return &pgerror.Error{Severity: e.Severity, Code: codeDiskFull, Message: e.Message, Hint: "Check free disk space."}
	}
	return e
}

// codeDiskFull is PostgreSQL's disk_full.
const codeDiskFull = "53100"

func (c *conn) sendError(err error) {
	e := wireError(err)
	sev := e.Severity
	if sev == "" {
		sev = "ERROR"
	}
	c.be.Send(&pgproto3.ErrorResponse{Severity: sev, SeverityUnlocalized: sev, Code: e.Code, Message: e.Message, Detail: e.Detail, Hint: e.Hint, Position: e.Position, Where: e.Where})
	if e.Code == pgerror.CodeInternal {
		c.srv.log.Error("internal error", "pid", c.pid, "err", e.Message)
	} else {
		c.srv.log.Debug("statement error", "pid", c.pid, "sqlstate", e.Code, "err", e.Message)
	}
	c.srv.cfg.Metrics.statementError(e.Code)
}

// testHookExecuted, set by tests only (before the server starts), is called
// by the session's goroutine as a statement has finished executing, before
// the shutdown check and the sending of its result; ctx is the statement's.
var testHookExecuted func(ctx context.Context, pid int32)

// exec runs a statement under a context the CancelRequest, shutdown and
// the client-connection check can cancel.
func (c *conn) exec(st *sqlfe.Stmt, params []types.Value) (*sqlfe.Result, error) {
	ctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	c.mu.Lock()
	c.running = cancel
	c.mu.Unlock()
	stop := c.watchClient(cancel)
	start := time.Now()
	res, err := c.sess.Execute(ctx, st, params)
	if err == nil && res.DiscardAll { // the protocol's prepared statements go too
		c.stmts, c.portals = map[string]*sqlfe.Stmt{}, map[string]*portal{}
	}
	if testHookExecuted != nil {
		testHookExecuted(ctx, c.pid)
	}
	stop()
	c.mu.Lock()
	c.running = nil
	c.mu.Unlock()
	c.srv.cfg.Metrics.statement(time.Since(start))
	if c.srv.shutting.Load() && ctx.Err() != nil {
		// Shutdown interrupted the statement. It may have finished anyway
		// (its lock was granted as the holder's session was rolled back);
		// like PostgreSQL's pending die interrupt, the shutdown still wins:
		// the work is rolled back and the session ends with 57P01.
		if err == nil {
			c.sess.Abort()
		}
		if err == nil || sqlfe.ToError(err).Code == pgerror.CodeQueryCanceled {
			res, err = nil, &pgerror.Error{Severity: "FATAL", Code: "57P01", Message: "terminating connection due to administrator command"}
		}
	}
	return res, err
}

// watchClient checks, while a statement runs, whether the client has gone
// (PostgreSQL's client_connection_check_interval): then the statement is
// cancelled so that its locks and waits end.
func (c *conn) watchClient(cancel context.CancelFunc) (stop func()) {
	iv := c.srv.cfg.ClientCheckInterval
	sc, ok := c.nc.(syscall.Conn)
	if iv < 0 || !ok {
		return func() {}
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return func() {}
	}
	done := make(chan struct{})
	exited := make(chan struct{})
	t := time.AfterFunc(iv, func() {
		defer close(exited)
		tick := time.NewTicker(iv)
		defer tick.Stop()
		for {
			if peerClosed(raw) {
				c.srv.log.Debug("client went away during a statement", "pid", c.pid)
				cancel()
				return
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	return func() {
		close(done)
		if !t.Stop() {
			<-exited
		}
	}
}

func peerClosed(raw syscall.RawConn) bool {
	closed := false
	_ = raw.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		closed = n == 0 && err == nil
		if err != nil && err != syscall.EAGAIN && err != syscall.EWOULDBLOCK && err != syscall.EINTR {
			closed = true
		}
		return true
	})
	return closed
}

// maxTargetList is PostgreSQL's MaxTupleAttributeNumber: a result may have
// at most 1664 columns. sqlfe refuses wider select lists when it compiles
// them; this is the wire's own check, so that a RowDescription or DataRow
// (whose field count is 16 bits) is never written truncated or not at all.
const maxTargetList = 1664

var errTooManyColumns = &pgerror.Error{Code: "54011", Message: fmt.Sprintf("target lists can have at most %d entries", maxTargetList)}

func checkColumns(n int) error {
	if n > maxTargetList {
		return errTooManyColumns
	}
	return nil
}

// checkFormats validates the format codes of a Bind: each 0 (text) or 1
// (binary), as PostgreSQL ("unsupported format code: 7", 22023).
func checkFormats(formats []int16) error {
	for _, f := range formats {
		if f != 0 && f != 1 {
			return &pgerror.Error{Code: pgerror.CodeInvalidParamValue, Message: fmt.Sprintf("unsupported format code: %d", f)}
		}
	}
	return nil
}

// tagWithCount is a command tag whose row count is n: the rows of the
// batch an Execute sent, as PostgreSQL reports a portal run in batches
// ("SELECT 2" for the last 2 of 10 rows), or the tag as it is if it
// carries no count.
func tagWithCount(tag string, n int) string {
	i := strings.LastIndexByte(tag, ' ')
	if i < 0 {
		return tag
	}
	if _, err := strconv.Atoi(tag[i+1:]); err != nil {
		return tag
	}
	return tag[:i+1] + strconv.Itoa(n)
}

// fieldDescs describes result columns; a column that is a table's carries
// the table's OID and its attribute number, as PostgreSQL's do (pgjdbc
// reads them to find a serial column's default).
func (c *conn) fieldDescs(cols []catalog.Column, formats []int16) []pgproto3.FieldDescription {
	fds := make([]pgproto3.FieldDescription, len(cols))
	for i, col := range cols {
		fds[i] = pgproto3.FieldDescription{Name: []byte(col.Name), DataTypeOID: col.OID(), DataTypeSize: col.Size(), TypeModifier: col.TypeModifier(), Format: formatOf(formats, i)}
		if col.Table != "" {
			fds[i].TableOID, fds[i].TableAttributeNumber = c.sess.RelationOID(col.Table), uint16(col.AttNum)
		}
	}
	return fds
}

func formatOf(formats []int16, i int) int16 {
	switch len(formats) {
	case 0:
		return 0
	case 1:
		return formats[0]
	}
	if i < len(formats) {
		return formats[i]
	}
	return 0
}

// sendRows sends rows as DataRow messages. Each row's values are encoded
// into one buffer and the message reuses it and its slice of values from
// row to row: Send encodes the message into the connection's write buffer
// at once, so nothing of a row is allocated per row.
func (c *conn) sendRows(rows [][]types.Value, cols []catalog.Column, formats []int16) {
	var vals [][]byte
	var ends []int
	buf := make([]byte, 0, 256) // never nil: an empty value is buf[i:i], not NULL
	msg := &pgproto3.DataRow{}
	for _, r := range rows {
		vals, ends, buf = vals[:0], ends[:0], buf[:0]
		for i, v := range r {
			switch {
			case v.Null:
			case formatOf(formats, i) != 1:
				buf = v.AppendText(buf)
			case i < len(cols):
				buf = cols[i].AppendBinary(buf, v)
			default:
				buf = v.AppendBinary(buf)
			}
			ends = append(ends, len(buf))
		}
		start := 0
		for i, v := range r {
			if v.Null {
				vals = append(vals, nil)
			} else {
				vals = append(vals, buf[start:ends[i]:ends[i]])
			}
			start = ends[i]
		}
		msg.Values = vals
		c.be.Send(msg)
	}
}

func (c *conn) ready() {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	st := c.sess.TxStatus()
	if st == 'I' {
		c.sendNotifications()
	}
	c.be.Send(&pgproto3.ReadyForQuery{TxStatus: st})
	_ = c.be.Flush()
	c.idle = st == 'I'
}

// sendNotifications sends the NotificationResponses of the session's
// LISTENs (sqlfe/notify.go), between transactions. wmu held.
func (c *conn) sendNotifications() {
	for _, n := range c.sess.TakeNotifications() {
		c.be.Send(&pgproto3.NotificationResponse{PID: uint32(n.PID), Channel: n.Channel, Payload: n.Payload})
	}
}

// notifier sends an idle session the notifications that arrive while it
// waits for its client (until ctx, the connection's, ends).
func (c *conn) notifier(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.notifyCh:
		}
		c.wmu.Lock()
		if c.idle {
			c.sendNotifications()
			_ = c.be.Flush()
		}
		c.wmu.Unlock()
	}
}

func (c *conn) simpleQuery(sql string) {
	sts, err := sqlfe.Parse(sql)
	if err != nil {
		c.sess.Abort()
		c.sendError(err)
		c.ready()
		return
	}
	if len(sts) == 0 {
		c.be.Send(&pgproto3.EmptyQueryResponse{})
		c.ready()
		return
	}
	failed := false
	for _, st := range sts {
		res, err := c.exec(st, nil)
		if err != nil {
			c.sendError(err)
			failed = true
			break
		}
		if res.Cols != nil {
			if err := checkColumns(len(res.Cols)); err != nil {
				c.sess.Abort()
				c.sendError(err)
				failed = true
				break
			}
			c.be.Send(&pgproto3.RowDescription{Fields: c.fieldDescs(res.Cols, nil)})
			c.sendRows(res.Rows, res.Cols, nil)
		}
		c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(res.Tag)})
	}
	if err := c.sess.EndGroup(); err != nil && !failed {
		c.sendError(err)
	}
	c.ready()
	if c.srv.shutting.Load() && failed {
		// the FATAL was sent; the next Receive fails and the session ends
		_ = c.nc.SetReadDeadline(time.Now())
	}
}

// extError reports an error of the extended protocol: sent and flushed at
// once, then every message up to Sync is discarded.
func (c *conn) extError(err error) {
	c.sess.Abort()
	c.sendError(err)
	_ = c.be.Flush()
	c.ignoreTillSync = true
}

func (c *conn) parse(m *pgproto3.Parse) {
	if m.Name != "" {
		if _, ok := c.stmts[m.Name]; ok {
			c.extError(&pgerror.Error{Code: pgerror.CodeDuplicatePrepared, Message: fmt.Sprintf("prepared statement %q already exists", m.Name)})
			return
		}
	}
	st, err := c.sess.Prepare(m.Query, m.ParameterOIDs)
	if err != nil {
		c.extError(err)
		return
	}
	c.stmts[m.Name] = st
	c.be.Send(&pgproto3.ParseComplete{})
}

func (c *conn) bind(m *pgproto3.Bind) {
	st, ok := c.stmts[m.PreparedStatement]
	if !ok {
		c.extError(&pgerror.Error{Code: pgerror.CodeUndefinedPrepared, Message: fmt.Sprintf("prepared statement %q does not exist", m.PreparedStatement)})
		return
	}
	var paramTypes []types.Type
	if st != nil {
		paramTypes = st.ParamTypes()
	}
	if len(m.Parameters) != len(paramTypes) {
		c.extError(&pgerror.Error{Code: pgerror.CodeProtocolViolation, Message: fmt.Sprintf("bind message supplies %d parameters, but prepared statement %q requires %d", len(m.Parameters), m.PreparedStatement, len(paramTypes))})
		return
	}
	if n := len(m.ParameterFormatCodes); n > 1 && n != len(m.Parameters) {
		c.extError(&pgerror.Error{Code: pgerror.CodeProtocolViolation, Message: fmt.Sprintf("bind message has %d parameter formats but %d parameters", n, len(m.Parameters))})
		return
	}
	if len(m.Parameters) > 0 {
		if err := checkFormats(m.ParameterFormatCodes); err != nil {
			c.extError(err)
			return
		}
	}
	params := make([]types.Value, len(m.Parameters))
	for i, p := range m.Parameters {
		if p == nil {
			params[i] = types.Null(paramTypes[i])
			continue
		}
		var v types.Value
		var err error
		v, err = st.ParseParam(i, formatOf(m.ParameterFormatCodes, i) == 1, p)
		if err != nil {
			e := sqlfe.ToError(err)
			if e.Code == pgerror.CodeInvalidBinary {
				e = &pgerror.Error{Code: e.Code, Message: fmt.Sprintf("incorrect binary data format in bind parameter %d", i+1)}
			}
			c.extError(e)
			return
		}
		params[i] = v
	}
	if n := len(m.ResultFormatCodes); n > 1 && st != nil {
		// PostgreSQL's PortalSetResultFormat: one code for all columns, or
		// one per column, for a statement that returns rows
		if cols, err := c.sess.Describe(st); err == nil && cols != nil && n != len(cols) {
			c.extError(&pgerror.Error{Code: pgerror.CodeProtocolViolation, Message: fmt.Sprintf("bind message has %d result formats but query has %d columns", n, len(cols))})
			return
		}
	}
	c.portals[m.DestinationPortal] = &portal{st: st, params: params, formats: append([]int16(nil), m.ResultFormatCodes...)}
	c.be.Send(&pgproto3.BindComplete{})
}

func (c *conn) describe(m *pgproto3.Describe) {
	var st *sqlfe.Stmt
	var formats []int16
	switch m.ObjectType {
	case 'S':
		s, ok := c.stmts[m.Name]
		if !ok {
			c.extError(&pgerror.Error{Code: pgerror.CodeUndefinedPrepared, Message: fmt.Sprintf("prepared statement %q does not exist", m.Name)})
			return
		}
		st = s
		var oids []uint32
		if st != nil {
			oids = st.ParamOIDs()
		}
		c.be.Send(&pgproto3.ParameterDescription{ParameterOIDs: oids})
	case 'P':
		p, ok := c.portals[m.Name]
		if !ok {
			// a SQL cursor (DECLARE) is a portal too, as in PostgreSQL:
			// psycopg describes its server-side cursors so
			if cols, ok := c.sess.CursorColumns(m.Name); ok {
				c.be.Send(&pgproto3.RowDescription{Fields: c.fieldDescs(cols, nil)})
				return
			}
			c.extError(&pgerror.Error{Code: pgerror.CodeInvalidCursor, Message: fmt.Sprintf("portal %q does not exist", m.Name)})
			return
		}
		st, formats = p.st, p.formats
	default:
		c.extError(&pgerror.Error{Code: pgerror.CodeProtocolViolation, Message: fmt.Sprintf("invalid DESCRIBE message subtype %d", m.ObjectType)})
		return
	}
	if st == nil {
		c.be.Send(&pgproto3.NoData{})
		return
	}
	cols, err := c.sess.Describe(st)
	if err != nil {
		c.extError(err)
		return
	}
	if cols == nil {
		c.be.Send(&pgproto3.NoData{})
		return
	}
	if err := checkColumns(len(cols)); err != nil {
		c.extError(err)
		return
	}
	c.be.Send(&pgproto3.RowDescription{Fields: c.fieldDescs(cols, formats)})
}

func (c *conn) execute(m *pgproto3.Execute) {
	p, ok := c.portals[m.Portal]
	if !ok {
		c.extError(&pgerror.Error{Code: pgerror.CodeInvalidCursor, Message: fmt.Sprintf("portal %q does not exist", m.Portal)})
		return
	}
	if p.st == nil {
		c.be.Send(&pgproto3.EmptyQueryResponse{})
		return
	}
	if p.res == nil {
		res, err := c.exec(p.st, p.params)
		if err != nil {
			c.extError(err)
			return
		}
		p.res = res
	}
	if p.res.Cols == nil {
		c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(p.res.Tag)})
		return
	}
	if err := checkColumns(len(p.res.Cols)); err != nil {
		c.extError(err)
		return
	}
	rows := p.res.Rows[p.pos:]
	// As PostgreSQL: a batch that fills the row limit ends in
	// PortalSuspended (whether rows remain is not known until the next
	// Execute); the batch that ends the portal reports its own rows.
	suspend := m.MaxRows > 0 && len(rows) >= int(m.MaxRows)
	if suspend {
		rows = rows[:m.MaxRows]
	}
	if len(rows) > 0 {
		// PostgreSQL checks the result format codes as it sends the first row
		if err := checkFormats(p.formats); err != nil {
			c.extError(err)
			return
		}
	}
	c.sendRows(rows, p.res.Cols, p.formats)
	p.pos += len(rows)
	if suspend {
		c.be.Send(&pgproto3.PortalSuspended{})
		return
	}
	c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(tagWithCount(p.res.Tag, len(rows)))})
}

func (c *conn) closeMsg(m *pgproto3.Close) {
	switch m.ObjectType {
	case 'S':
		delete(c.stmts, m.Name)
	case 'P':
		delete(c.portals, m.Name)
	}
	c.be.Send(&pgproto3.CloseComplete{})
}

func (c *conn) sync() {
	c.ignoreTillSync = false
	if err := c.sess.EndGroup(); err != nil {
		c.sendError(err)
	}
	if c.sess.TxStatus() == 'I' {
		clear(c.portals) // portals live until the end of their transaction
	}
	c.ready()
}
