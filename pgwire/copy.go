package pgwire

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/tupled/tupled/sql/pgerror"
)

// The COPY sub-protocol (sqlfe.CopyIO), run by the session's goroutine
// while a COPY statement executes, in the simple and the extended protocol
// alike:
//
//   - COPY FROM STDIN: CopyInResponse, then the client's CopyData messages,
//     handed to sqlfe one at a time as they arrive (sqlfe inserts the rows
//     of each complete line at once), until CopyDone (the statement's
//     CommandComplete "COPY n" follows) or CopyFail (ERROR 57014 "COPY from
//     stdin failed: ..."). Flush and Sync in between are ignored, as
//     PostgreSQL does for clients that send them without noticing the
//     COPY; any other message is ERROR 08P01 "unexpected message type ...
//     during COPY from stdin". After an error, CopyData/CopyDone/CopyFail
//     still arriving are ignored by the message loop (and, in the extended
//     protocol, everything up to Sync). A connection that ends mid-COPY
//     rolls the COPY's transaction back and ends the session.
//   - COPY TO STDOUT: CopyOutResponse, one CopyData per row, CopyDone.

// copyIO is a conn's sqlfe.CopyIO.
type copyIO struct{ c *conn }

func formats(binary bool, ncols int) (byte, []uint16) {
	f := make([]uint16, ncols)
	if !binary {
		return 0, f
	}
	for i := range f {
		f[i] = 1
	}
	return 1, f
}

func (x copyIO) CopyInStart(binary bool, ncols int) error {
	overall, cols := formats(binary, ncols)
	x.c.be.Send(&pgproto3.CopyInResponse{OverallFormat: overall, ColumnFormatCodes: cols})
	return x.c.be.Flush()
}

// errCopyConnLost is the error of a COPY FROM STDIN whose client went away
// (PostgreSQL's wording); the session ends after it.
var errCopyConnLost = &pgerror.Error{Code: "08006", Message: "unexpected EOF on client connection with an open transaction"}

func (x copyIO) CopyInData(ctx context.Context) ([]byte, error) {
	c := x.c
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		msg, err := c.be.Receive()
		if err != nil {
			var pe *protocolError
			if errors.As(err, &pe) && !pe.fatal {
				return nil, &pgerror.Error{Code: pgerror.CodeProtocolViolation, Message: pe.msg}
			}
			// The stream is gone or its framing lost: the message loop ends
			// the connection (with the FATAL a protocol violation gets).
			c.copyErr = err
			if c.srv.shutting.Load() {
				return nil, &pgerror.Error{Severity: "FATAL", Code: "57P01", Message: "terminating connection due to administrator command"}
			}
			return nil, errCopyConnLost
		}
		switch m := msg.(type) {
		case *pgproto3.CopyData:
			return m.Data, nil
		case *pgproto3.CopyDone:
			return nil, io.EOF
		case *pgproto3.CopyFail:
			return nil, &pgerror.Error{Code: pgerror.CodeQueryCanceled, Message: "COPY from stdin failed: " + m.Message}
		case *pgproto3.Flush, *pgproto3.Sync:
			continue
		case *pgproto3.Terminate:
			c.copyErr = io.EOF
			return nil, errCopyConnLost
		default:
			return nil, &pgerror.Error{Code: pgerror.CodeProtocolViolation, Message: fmt.Sprintf("unexpected message type 0x%02X during COPY from stdin", frontendType(msg))}
		}
	}
}

// frontendType is the type byte of a frontend message.
func frontendType(msg pgproto3.FrontendMessage) byte {
	switch msg.(type) {
	case *pgproto3.Query:
		return 'Q'
	case *pgproto3.Parse:
		return 'P'
	case *pgproto3.Bind:
		return 'B'
	case *pgproto3.Execute:
		return 'E'
	case *pgproto3.Describe:
		return 'D'
	case *pgproto3.Close:
		return 'C'
	case *pgproto3.FunctionCall:
		return 'F'
	}
	return 0
}

func (x copyIO) CopyOutStart(binary bool, ncols int) error {
	overall, cols := formats(binary, ncols)
	x.c.be.Send(&pgproto3.CopyOutResponse{OverallFormat: overall, ColumnFormatCodes: cols})
	return x.c.be.err
}

func (x copyIO) CopyOutData(b []byte) error {
	x.c.be.Send(&pgproto3.CopyData{Data: b})
	return x.c.be.err
}

func (x copyIO) CopyOutDone() error {
	x.c.be.Send(&pgproto3.CopyDone{})
	return x.c.be.err
}
