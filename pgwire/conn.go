package pgwire

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/tupled/tupled/sqlfe"
)

// conn is one client connection. One goroutine (serve) reads its messages
// and runs its statements; other goroutines only cancel the running
// statement (CancelRequest, shutdown, the client-check timer).
type conn struct {
	srv *Server
	// nc is the TCP connection: deadlines, the client check and a forced
	// close act on it, TLS or not.
	nc net.Conn
	// plain counts the bytes read from nc before TLS (see startTLS).
	plain countingReader
	// tls is the TLS connection over nc once negotiated; the backend
	// (be) then reads and writes through it.
	tls      *tls.Conn
	be       *pgproto3.Backend
	pid      int32
	secret   []byte
	sess     *sqlfe.Session
	admitted bool // holds a slot in srv.sessions

	mu        sync.Mutex
	ctx       context.Context // cancelled at shutdown
	cancelCtx context.CancelFunc
	running   context.CancelFunc // the running statement's, nil when idle

	stmts          map[string]*sqlfe.Stmt // nil value: an empty query
	portals        map[string]*portal
	ignoreTillSync bool
}

type portal struct {
	st      *sqlfe.Stmt
	params  []sqlfe.Value
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
	if c.srv.shutting.Load() {
		return
	}
	c.plain.r = c.nc
	c.be = pgproto3.NewBackend(&c.plain, c.nc)
	c.be.SetMaxBodyLen(c.srv.cfg.MaxMessageSize)
	defer func() {
		if c.admitted {
			c.srv.sessions.Add(-1)
		}
	}()
	if !c.startup() {
		return
	}
	m := c.srv.cfg.Metrics
	m.connOpened(c.tls != nil)
	defer func() {
		c.sess.Close()
		m.connClosed()
	}()
	c.loop()
}

func (c *conn) fatal(code, msg string) {
	c.be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: code, Message: msg})
	_ = c.be.Flush()
}

// startup runs the startup and authentication phase.
func (c *conn) startup() bool {
	_ = c.nc.SetReadDeadline(time.Now().Add(time.Minute)) // authentication_timeout, TLS handshake included
	var sm *pgproto3.StartupMessage
	// As PostgreSQL: one SSLRequest and one GSSENCRequest at most, and none
	// after TLS is in use; negotiated counts their bytes (8 each).
	sslDone, gssDone, negotiated := false, false, int64(0)
	for sm == nil {
		msg, err := c.be.ReceiveStartupMessage()
		if err != nil {
			c.srv.log.Debug("bad startup packet", "remote", c.nc.RemoteAddr().String(), "tls", c.tls != nil, "err", err)
			return false
		}
		switch m := msg.(type) {
		case *pgproto3.SSLRequest:
			if sslDone {
				c.fatal("0A000", "unsupported frontend protocol 1234.5679: server supports 3.0 to 3.0")
				return false
			}
			sslDone, negotiated = true, negotiated+8
			if !c.answerSSL(negotiated) {
				return false
			}
		case *pgproto3.GSSEncRequest:
			if gssDone || c.tls != nil {
				c.fatal("0A000", "unsupported frontend protocol 1234.5680: server supports 3.0 to 3.0")
				return false
			}
			gssDone, negotiated = true, negotiated+8
			if _, err := c.nc.Write([]byte{'N'}); err != nil {
				return false
			}
		case *pgproto3.CancelRequest:
			c.srv.cancel(m.ProcessID, m.SecretKey)
			return false
		case *pgproto3.StartupMessage:
			sm = m
		}
	}
	if sm.ProtocolVersion != pgproto3.ProtocolVersion30 {
		var unknown []string
		for k := range sm.Parameters {
			if len(k) > 4 && k[:4] == "_pq_" {
				unknown = append(unknown, k)
			}
		}
		c.be.Send(&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0, UnrecognizedOptions: unknown})
	}
	user := sm.Parameters["user"]
	if user == "" {
		c.fatal("28000", "no PostgreSQL user name specified in startup packet")
		return false
	}
	if c.srv.cfg.TLSRequired && c.tls == nil {
		db := sm.Parameters["database"]
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
			c.srv.log.Info("authentication failed", "user", user, "remote", c.nc.RemoteAddr().String(), "err", err)
			c.fatal("28P01", fmt.Sprintf("password authentication failed for user %q", user))
			return false
		}
	}
	_ = c.nc.SetReadDeadline(time.Time{})
	if c.srv.shutting.Load() {
		c.fatal("57P03", "the database system is shutting down")
		return false
	}
	c.srv.register(c)
	c.be.Send(&pgproto3.AuthenticationOk{})
	params := map[string]string{}
	for k, v := range sm.Parameters {
		if len(k) < 4 || k[:4] != "_pq_" {
			params[k] = v
		}
	}
	c.sess = c.srv.cfg.Engine.NewSession(c.pid, user, params)
	c.sess.Notice = func(e *sqlfe.Error) {
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
	c.stmts = map[string]*sqlfe.Stmt{}
	c.portals = map[string]*portal{}
	tlsVersion := "off"
	if c.tls != nil {
		tlsVersion = tls.VersionName(c.tls.ConnectionState().Version)
	}
	c.srv.log.Debug("session started", "pid", c.pid, "user", user, "remote", c.nc.RemoteAddr().String(), "application_name", params["application_name"], "tls", tlsVersion)
	return true
}

// answerSSL answers an SSLRequest: 'N' without TLS configured; else 'S',
// the TLS handshake (under the startup deadline and the connection's
// context), and a backend over the TLS connection. False: the connection
// is to be closed.
func (c *conn) answerSSL(negotiated int64) bool {
	cfg := c.srv.cfg.TLS
	if cfg == nil {
		_, err := c.nc.Write([]byte{'N'})
		return err == nil
	}
	if c.plain.n > negotiated {
		// Bytes after the SSLRequest sit in the plain backend's buffer: a
		// client must wait for 'S' before its handshake, and whatever it sent
		// unencrypted must not pass for TLS data (PostgreSQL's check,
		// CVE-2021-23214). Sent in plain text, as PostgreSQL does.
		c.be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: sqlfe.CodeProtocolViolation,
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
	c.be = pgproto3.NewBackend(tc, tc)
	c.be.SetMaxBodyLen(c.srv.cfg.MaxMessageSize)
	return true
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.n += int64(n)
	return n, err
}

func (c *conn) loop() {
	for {
		msg, err := c.be.Receive()
		if err != nil {
			var tooLong *pgproto3.ExceededMaxBodyLenErr
			switch {
			case c.srv.shutting.Load():
				c.fatal("57P01", "terminating connection due to administrator command")
			case errors.As(err, &tooLong):
				c.srv.log.Warn("message too long", "pid", c.pid, "err", err)
				c.fatal(sqlfe.CodeProtocolViolation, "invalid message length")
			}
			return
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
		default:
			c.fatal(sqlfe.CodeProtocolViolation, fmt.Sprintf("unexpected message type %T", msg))
			return
		}
	}
}

func (c *conn) sendError(err error) {
	e := sqlfe.ToError(err)
	sev := e.Severity
	if sev == "" {
		sev = "ERROR"
	}
	c.be.Send(&pgproto3.ErrorResponse{Severity: sev, SeverityUnlocalized: sev, Code: e.Code, Message: e.Message, Detail: e.Detail, Hint: e.Hint, Position: e.Position})
	if e.Code == sqlfe.CodeInternal {
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
func (c *conn) exec(st *sqlfe.Stmt, params []sqlfe.Value) (*sqlfe.Result, error) {
	ctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	c.mu.Lock()
	c.running = cancel
	c.mu.Unlock()
	stop := c.watchClient(cancel)
	start := time.Now()
	res, err := c.sess.Execute(ctx, st, params)
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
		if err == nil || sqlfe.ToError(err).Code == sqlfe.CodeQueryCanceled {
			res, err = nil, &sqlfe.Error{Severity: "FATAL", Code: "57P01", Message: "terminating connection due to administrator command"}
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

func fieldDescs(cols []sqlfe.Column, formats []int16) []pgproto3.FieldDescription {
	fds := make([]pgproto3.FieldDescription, len(cols))
	for i, col := range cols {
		fds[i] = pgproto3.FieldDescription{Name: []byte(col.Name), DataTypeOID: col.Type.OID(), DataTypeSize: col.Type.Size(), TypeModifier: -1, Format: formatOf(formats, i)}
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

func (c *conn) sendRows(rows [][]sqlfe.Value, formats []int16) {
	for _, r := range rows {
		vals := make([][]byte, len(r))
		for i, v := range r {
			if v.Null {
				continue
			}
			if formatOf(formats, i) == 1 {
				vals[i] = v.AppendBinary([]byte{})
			} else {
				vals[i] = v.AppendText([]byte{})
			}
		}
		c.be.Send(&pgproto3.DataRow{Values: vals})
	}
}

func (c *conn) ready() {
	c.be.Send(&pgproto3.ReadyForQuery{TxStatus: c.sess.TxStatus()})
	_ = c.be.Flush()
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
			c.be.Send(&pgproto3.RowDescription{Fields: fieldDescs(res.Cols, nil)})
			c.sendRows(res.Rows, nil)
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
			c.extError(&sqlfe.Error{Code: sqlfe.CodeDuplicatePrepared, Message: fmt.Sprintf("prepared statement %q already exists", m.Name)})
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
		c.extError(&sqlfe.Error{Code: sqlfe.CodeUndefinedPrepared, Message: fmt.Sprintf("prepared statement %q does not exist", m.PreparedStatement)})
		return
	}
	var types []sqlfe.Type
	if st != nil {
		types = st.ParamTypes()
	}
	if len(m.Parameters) != len(types) {
		c.extError(&sqlfe.Error{Code: sqlfe.CodeProtocolViolation, Message: fmt.Sprintf("bind message supplies %d parameters, but prepared statement %q requires %d", len(m.Parameters), m.PreparedStatement, len(types))})
		return
	}
	if n := len(m.ParameterFormatCodes); n > 1 && n != len(m.Parameters) {
		c.extError(&sqlfe.Error{Code: sqlfe.CodeProtocolViolation, Message: fmt.Sprintf("bind message has %d parameter formats but %d parameters", n, len(m.Parameters))})
		return
	}
	params := make([]sqlfe.Value, len(m.Parameters))
	for i, p := range m.Parameters {
		if p == nil {
			params[i] = sqlfe.Null(types[i])
			continue
		}
		var v sqlfe.Value
		var err error
		if formatOf(m.ParameterFormatCodes, i) == 1 {
			v, err = sqlfe.ParseBinary(types[i], p)
		} else {
			v, err = sqlfe.ParseText(types[i], string(p))
		}
		if err != nil {
			e := sqlfe.ToError(err)
			if e.Code == sqlfe.CodeInvalidBinary {
				e = &sqlfe.Error{Code: e.Code, Message: fmt.Sprintf("incorrect binary data format in bind parameter %d", i+1)}
			}
			c.extError(e)
			return
		}
		params[i] = v
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
			c.extError(&sqlfe.Error{Code: sqlfe.CodeUndefinedPrepared, Message: fmt.Sprintf("prepared statement %q does not exist", m.Name)})
			return
		}
		st = s
		var oids []uint32
		if st != nil {
			for _, t := range st.ParamTypes() {
				oids = append(oids, t.OID())
			}
		}
		c.be.Send(&pgproto3.ParameterDescription{ParameterOIDs: oids})
	case 'P':
		p, ok := c.portals[m.Name]
		if !ok {
			c.extError(&sqlfe.Error{Code: sqlfe.CodeInvalidCursor, Message: fmt.Sprintf("portal %q does not exist", m.Name)})
			return
		}
		st, formats = p.st, p.formats
	default:
		c.extError(&sqlfe.Error{Code: sqlfe.CodeProtocolViolation, Message: fmt.Sprintf("invalid DESCRIBE message subtype %d", m.ObjectType)})
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
	c.be.Send(&pgproto3.RowDescription{Fields: fieldDescs(cols, formats)})
}

func (c *conn) execute(m *pgproto3.Execute) {
	p, ok := c.portals[m.Portal]
	if !ok {
		c.extError(&sqlfe.Error{Code: sqlfe.CodeInvalidCursor, Message: fmt.Sprintf("portal %q does not exist", m.Portal)})
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
	rows := p.res.Rows[p.pos:]
	if m.MaxRows > 0 && len(rows) > int(m.MaxRows) {
		c.sendRows(rows[:m.MaxRows], p.formats)
		p.pos += int(m.MaxRows)
		c.be.Send(&pgproto3.PortalSuspended{})
		return
	}
	if p.res.Cols != nil {
		c.sendRows(rows, p.formats)
	}
	p.pos = len(p.res.Rows)
	c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(p.res.Tag)})
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
