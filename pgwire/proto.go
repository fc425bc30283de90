package pgwire

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/tupled/tupled/sql/pgerror"
)

// Message size limits, PostgreSQL's (src/include/libpq/pqcomm.h, auth.h).
const (
	// maxStartupPacketLen bounds a startup packet's body (the protocol
	// version or request code and the parameters): MAX_STARTUP_PACKET_LENGTH.
	maxStartupPacketLen = 10000
	// maxAuthMessageLen bounds an authentication message (PasswordMessage,
	// SASLInitialResponse, SASLResponse), length word included:
	// PG_MAX_AUTH_TOKEN_LENGTH. It is checked before the body is read.
	maxAuthMessageLen = 65535
	// smallMessageLimit bounds the body of the messages that carry no
	// query text or data (Sync, Flush, Execute, Describe, Close, Terminate,
	// CopyDone, CopyFail): PQ_SMALL_MESSAGE_LIMIT. Only Query, Parse, Bind,
	// FunctionCall and CopyData may be as long as MaxMessageSize.
	smallMessageLimit = 10000
	// keptBodyBuf is the largest input buffer a connection keeps between
	// messages; a longer body gets a buffer of its own, grown as its bytes
	// arrive (never ahead of them) and dropped after the message.
	keptBodyBuf = 8 << 10
	// sendBufFlush is the size at which Send writes out what it has
	// gathered (a large result streams through it instead of being built
	// whole); a connection keeps no output buffer larger than keptBodyBuf.
	sendBufFlush = 64 << 10
	// readBufSize is the buffered reader's size (as PostgreSQL's
	// PQ_RECV_BUFFER_SIZE).
	readBufSize = 8 << 10
)

// Protocol version codes (PG_PROTOCOL(major, minor)) and request codes.
const (
	protocol30        = 3 << 16
	sslRequestCode    = 1234<<16 | 5679
	gssEncRequestCode = 1234<<16 | 5680
	cancelRequestCode = 1234<<16 | 5678
)

// protocolError is a violation of the frontend/backend protocol (08P01).
// A fatal one has lost the message boundaries (a bad length or an unknown
// message type, as PostgreSQL's SocketBackend): the connection ends after
// the FATAL. A non-fatal one is a malformed body whose length was right:
// the session goes on after the ERROR, as PostgreSQL's pq_getmsg* errors.
type protocolError struct {
	typ   byte // the message type, 0 for a startup packet
	fatal bool
	msg   string
}

func (e *protocolError) Error() string { return e.msg }

// backend is one connection's message codec: it reads frontend messages
// (bounded by a limit checked before any body byte is read, with a body
// buffer that is not kept beyond keptBodyBuf), and buffers backend
// messages until Flush. It replaces pgproto3.Backend, whose reader keeps
// no per-message-type limit and allocates a message's whole body when its
// header arrives; pgproto3's message types still do the encoding and
// decoding.
type backend struct {
	rd      *bufio.Reader
	w       io.Writer
	hdr     [5]byte
	body    []byte // reused for bodies up to keptBodyBuf
	wbuf    []byte
	encErr  error // the first encode error: that message was not sent
	err     error // the first encode or write error; Flush returns it
	maxBody int   // the limit of Query/Parse/Bind/FunctionCall/CopyData bodies
	// auth: the connection has not authenticated; every message is an
	// authentication message, bounded by maxAuthMessageLen.
	auth bool
}

func newBackend(r io.Reader, w io.Writer, maxBody int) *backend {
	rd, ok := r.(*bufio.Reader)
	if !ok {
		rd = bufio.NewReaderSize(r, readBufSize)
	}
	return &backend{rd: rd, w: w, maxBody: maxBody, auth: true}
}

// Send buffers msg. An encode error is kept for Flush (the message is
// not sent); past sendBufFlush bytes the buffer is written out.
func (b *backend) Send(msg pgproto3.BackendMessage) {
	if b.err != nil {
		return
	}
	buf, err := msg.Encode(b.wbuf)
	if err != nil {
		b.err = fmt.Errorf("encoding %T: %w", msg, err)
		b.encErr = b.err
		return
	}
	b.wbuf = buf
	if len(b.wbuf) >= sendBufFlush {
		b.err = b.write()
	}
}

// reset drops what is buffered and any error.
func (b *backend) reset() {
	b.err, b.encErr = nil, nil
	b.wbuf = b.wbuf[:0]
}

func (b *backend) write() error {
	_, err := b.w.Write(b.wbuf)
	if cap(b.wbuf) > keptBodyBuf {
		b.wbuf = nil
	} else {
		b.wbuf = b.wbuf[:0]
	}
	return err
}

// Flush writes the buffered messages; it returns the first error of a
// Send or a write since the last Flush. After an encode error it writes
// nothing and keeps failing until reset: the session's loop ends it.
func (b *backend) Flush() error {
	if b.encErr != nil {
		return b.encErr
	}
	if err := b.err; err != nil {
		b.err = nil
		b.wbuf = b.wbuf[:0]
		return err
	}
	if len(b.wbuf) == 0 {
		return nil
	}
	return b.write()
}

// limitFor is the largest body accepted for a message of type typ.
func (b *backend) limitFor(typ byte) int {
	if b.auth {
		return maxAuthMessageLen - 4
	}
	switch typ {
	case 'Q', 'P', 'B', 'F', 'd':
		return b.maxBody
	}
	return min(smallMessageLimit, b.maxBody)
}

// readMessage reads one message: its type and its body, valid until the
// next call. The length is checked against the type's limit before any
// of the body is read: an over-long message is refused without reading or
// allocating for it.
func (b *backend) readMessage() (byte, []byte, error) {
	if _, err := io.ReadFull(b.rd, b.hdr[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, nil, unexpectedEOF(err)
		}
		return 0, nil, err
	}
	typ := b.hdr[0]
	if !b.auth && !knownFrontendType(typ) {
		return typ, nil, &protocolError{typ: typ, fatal: true, msg: fmt.Sprintf("invalid frontend message type %d", typ)}
	}
	n := int64(int32(binary.BigEndian.Uint32(b.hdr[1:]))) - 4
	if n < 0 || n > int64(b.limitFor(typ)) {
		return typ, nil, &protocolError{typ: typ, fatal: true, msg: "invalid message length"}
	}
	if n <= keptBodyBuf {
		if b.body == nil {
			b.body = make([]byte, keptBodyBuf)
		}
		body := b.body[:n]
		if _, err := io.ReadFull(b.rd, body); err != nil {
			return typ, nil, unexpectedEOF(err)
		}
		return typ, body, nil
	}
	// A long body: the buffer grows with the bytes that arrive, so a
	// header announcing a long message costs nothing until its bytes come.
	var buf bytes.Buffer
	if _, err := io.CopyN(&buf, b.rd, n); err != nil {
		return typ, nil, unexpectedEOF(err)
	}
	return typ, buf.Bytes(), nil
}

// unexpectedEOF turns the end of the stream inside a message into a
// protocol violation (the client half-closed mid-message; it may still
// read the FATAL). Other read errors pass as they are.
func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &protocolError{fatal: true, msg: "incomplete message from client"}
	}
	return err
}

func knownFrontendType(typ byte) bool {
	switch typ {
	case 'Q', 'P', 'B', 'E', 'D', 'C', 'S', 'H', 'X', 'F', 'd', 'c', 'f':
		return true
	}
	return false
}

// Receive reads and decodes the next message after authentication. A
// body that does not decode is a non-fatal *protocolError naming its type.
func (b *backend) Receive() (pgproto3.FrontendMessage, error) {
	typ, body, err := b.readMessage()
	if err != nil {
		return nil, err
	}
	var msg pgproto3.FrontendMessage
	switch typ {
	case 'Q':
		msg = &pgproto3.Query{}
	case 'P':
		msg = &pgproto3.Parse{}
	case 'B':
		msg = &pgproto3.Bind{}
	case 'E':
		msg = &pgproto3.Execute{}
	case 'D':
		msg = &pgproto3.Describe{}
	case 'C':
		msg = &pgproto3.Close{}
	case 'S':
		msg = &pgproto3.Sync{}
	case 'H':
		msg = &pgproto3.Flush{}
	case 'X':
		msg = &pgproto3.Terminate{}
	case 'F':
		msg = &pgproto3.FunctionCall{}
	case 'd':
		msg = &pgproto3.CopyData{}
	case 'c':
		msg = &pgproto3.CopyDone{}
	case 'f':
		msg = &pgproto3.CopyFail{}
	default:
		return nil, &protocolError{typ: typ, fatal: true, msg: fmt.Sprintf("invalid frontend message type %d", typ)}
	}
	if err := msg.Decode(body); err != nil {
		return nil, &protocolError{typ: typ, msg: "invalid message format", fatal: false}
	}
	return msg, nil
}

// receiveAuth reads an authentication message ('p'): what it decodes to
// depends on the exchange (want). Another message type is a protocol
// violation, as in PostgreSQL's auth.c.
func (b *backend) receiveAuth(want pgproto3.FrontendMessage, what string) error {
	typ, body, err := b.readMessage()
	if err != nil {
		return err
	}
	if typ != 'p' {
		return &protocolError{typ: typ, fatal: true, msg: fmt.Sprintf("expected %s response, got message type %d", what, typ)}
	}
	if err := want.Decode(body); err != nil {
		return &protocolError{typ: typ, fatal: true, msg: "invalid message format"}
	}
	return nil
}

// startupPacket is a decoded startup packet: a request (SSL, GSSENC,
// cancel) or a StartupMessage of some protocol version.
type startupPacket struct {
	code   uint32            // protocol version or request code
	params map[string]string // a StartupMessage's parameters
	order  []string          // their names, in the order sent
	// cancel: a CancelRequest's pid and key
	pid    uint32
	secret []byte
}

// readStartupPacket reads one startup packet (no message type byte; a
// length word that counts itself) and decodes it. Its length is checked
// before its body is read.
func readStartupPacket(rd io.Reader) (*startupPacket, error) {
	var lw [4]byte
	if _, err := io.ReadFull(rd, lw[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, unexpectedEOF(err)
		}
		return nil, err
	}
	n := int64(int32(binary.BigEndian.Uint32(lw[:]))) - 4
	if n < 4 || n > maxStartupPacketLen {
		return nil, &protocolError{fatal: true, msg: "invalid length of startup packet"}
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(rd, body); err != nil {
		return nil, unexpectedEOF(err)
	}
	return parseStartupPacket(body)
}

// parseStartupPacket decodes a startup packet's body, as PostgreSQL's
// ProcessStartupPacket: the code, then for protocol 3 name/value pairs of
// NUL-terminated strings ending with an empty name. A bad layout is a
// fatal protocol violation; a protocol major version other than 3 is
// accepted here and refused by the caller (which knows how to answer it).
func parseStartupPacket(body []byte) (*startupPacket, error) {
	if len(body) < 4 {
		return nil, &protocolError{fatal: true, msg: "invalid length of startup packet"}
	}
	p := &startupPacket{code: binary.BigEndian.Uint32(body)}
	rest := body[4:]
	switch p.code {
	case cancelRequestCode:
		if len(rest) != 8 {
			return nil, &protocolError{fatal: true, msg: "invalid length of cancel request packet"}
		}
		p.pid = binary.BigEndian.Uint32(rest)
		p.secret = append([]byte(nil), rest[4:]...)
		return p, nil
	case sslRequestCode, gssEncRequestCode:
		return p, nil
	}
	if p.code>>16 != 3 {
		return p, nil
	}
	p.params = map[string]string{}
	for {
		name, r, ok := cutCString(rest)
		if !ok {
			return nil, &protocolError{fatal: true, msg: "invalid startup packet layout: expected terminator as last byte"}
		}
		if name == "" {
			if len(r) != 0 {
				return nil, &protocolError{fatal: true, msg: "invalid startup packet layout: expected terminator as last byte"}
			}
			return p, nil
		}
		value, r, ok := cutCString(r)
		if !ok {
			return nil, &protocolError{fatal: true, msg: "invalid startup packet layout: expected terminator as last byte"}
		}
		if _, dup := p.params[name]; !dup {
			p.order = append(p.order, name)
		}
		p.params[name] = value
		rest = r
	}
}

func cutCString(b []byte) (string, []byte, bool) {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return "", nil, false
	}
	return string(b[:i]), b[i+1:], true
}

// parseOptions splits the startup "options" parameter as PostgreSQL's
// pg_split_opts (words separated by white space, a backslash escapes the
// next character) and reads the -c name=value and --name=value switches
// (process_postgres_switches). Other switches are refused (42601), as
// PostgreSQL refuses them for a non-superuser or does not know them.
func parseOptions(opts string) ([][2]string, error) {
	var words []string
	var cur strings.Builder
	inWord, escape := false, false
	for _, r := range opts {
		switch {
		case escape:
			cur.WriteRune(r)
			escape, inWord = false, true
		case r == '\\':
			escape, inWord = true, true
		case r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	var out [][2]string
	for i := 0; i < len(words); i++ {
		w := words[i]
		var setting string
		switch {
		case w == "-c":
			if i+1 == len(words) {
				return nil, &pgerror.Error{Severity: "FATAL", Code: pgerror.CodeSyntax, Message: "-c requires a value"}
			}
			i++
			setting = words[i]
		case strings.HasPrefix(w, "-c"):
			setting = w[2:]
		case strings.HasPrefix(w, "--"):
			setting = w[2:]
		default:
			return nil, &pgerror.Error{Severity: "FATAL", Code: pgerror.CodeSyntax, Message: fmt.Sprintf("invalid command-line argument for server process: %s", w)}
		}
		name, value, ok := strings.Cut(setting, "=")
		if !ok {
			if strings.HasPrefix(w, "--") {
				return nil, &pgerror.Error{Severity: "FATAL", Code: pgerror.CodeSyntax, Message: fmt.Sprintf("--%s requires a value", setting)}
			}
			return nil, &pgerror.Error{Severity: "FATAL", Code: pgerror.CodeSyntax, Message: fmt.Sprintf("-c %s requires a value", setting)}
		}
		// ParseLongOption: dashes in the name stand for underscores
		out = append(out, [2]string{strings.ReplaceAll(name, "-", "_"), value})
	}
	return out, nil
}
