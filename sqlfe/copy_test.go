package sqlfe

import (
	"context"
	"fmt"
	"io"
	"testing"
)

// chunkIO is a CopyIO fed from memory: COPY FROM reads chunks, COPY TO
// collects what it sends.
type chunkIO struct {
	in  [][]byte
	out []byte
}

func (c *chunkIO) CopyInStart(bool, int) error { return nil }
func (c *chunkIO) CopyInData(context.Context) ([]byte, error) {
	if len(c.in) == 0 {
		return nil, io.EOF
	}
	b := c.in[0]
	c.in = c.in[1:]
	return b, nil
}
func (c *chunkIO) CopyOutStart(bool, int) error { return nil }
func (c *chunkIO) CopyOutData(b []byte) error   { c.out = append(c.out, b...); return nil }
func (c *chunkIO) CopyOutDone() error           { return nil }

// copyOutcome runs COPY FROM STDIN of data cut into pieces of size n (0:
// one piece) into an emptied table and renders what happened: the error,
// or the tag and the table's rows as COPY TO sends them.
func copyOutcome(t testing.TB, s *Session, opts string, data []byte, n int) string {
	t.Helper()
	if _, err := run(t, s, "TRUNCATE t"); err != nil {
		t.Fatal(err)
	}
	io := &chunkIO{}
	for n > 0 && len(data) > n {
		io.in = append(io.in, data[:n])
		data = data[n:]
	}
	io.in = append(io.in, data)
	s.SetCopyIO(io)
	tag, err := run(t, s, "COPY t FROM STDIN "+opts)
	if err != nil {
		return fmt.Sprintf("ERROR %s %s | %s", err.Code, err.Message, err.Where)
	}
	io.out = nil
	if _, err := run(t, s, "COPY t TO STDOUT "+opts); err != nil {
		t.Fatal(err)
	}
	return tag + "\n" + string(io.out)
}

// FuzzCopySplit: whatever the data, COPY FROM neither panics nor depends on
// how the data is cut into CopyData messages (a line, a \r\n, an escape or
// the end marker split across two of them), and what it stores COPY TO
// gives back in the same format.
func FuzzCopySplit(f *testing.F) {
	for _, seed := range []string{
		"1\tx\tabc\n2\t\\N\t\\N\n",
		"1\ta\\tb\\nc\\\\\tz\r\n2\t\\101\\x4a\ty\r\n",
		"1\tx\ty\n\\.\ngarbage",
		"1\tx\ty\\.\n",
		"1,\"a,b\",\"q\"\"q\"\n2,\"multi\nline\",\n",
		"1,\"unterminated\n",
		"7\tcr\rin\n",
		"\\.",
		"1\t\\",
		"x\ty\tz\n",
		"1\t\\xff\tz\n",
	} {
		f.Add([]byte(seed), uint8(1), false)
		f.Add([]byte(seed), uint8(3), true)
	}
	_, s := newTestSession(f)
	if _, err := run(f, s, "CREATE TABLE t (a int, b text, c varchar(3))"); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, n uint8, csv bool) {
		opts := ""
		if csv {
			opts = "(FORMAT csv)"
		}
		whole := copyOutcome(t, s, opts, data, 0)
		if cut := copyOutcome(t, s, opts, data, int(n%16)+1); cut != whole {
			t.Fatalf("%q in pieces of %d:\n%s\nwhole:\n%s", data, n%16+1, cut, whole)
		}
	})
}
