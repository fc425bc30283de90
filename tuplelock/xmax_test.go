package tuplelock

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/tuplemode"
	"github.com/tupled/tupled/internal/xact"
	"github.com/tupled/tupled/lockmgr"
	"github.com/tupled/tupled/multixact"
)

// bitNames are the infomask (and infomask2) bits a case file may name.
// XMAX_SHR_LOCK is two bits, as in PostgreSQL.
var bitNames = []struct {
	name string
	im   uint16
	im2  uint16
}{
	{"XMAX_INVALID", heap.XmaxInvalid, 0},
	{"XMAX_COMMITTED", heap.XmaxCommitted, 0},
	{"XMAX_IS_MULTI", heap.XmaxIsMulti, 0},
	{"XMAX_LOCK_ONLY", heap.XmaxLockOnly, 0},
	{"XMAX_SHR_LOCK", heap.XmaxShrLock, 0},
	{"XMAX_KEYSHR_LOCK", heap.XmaxKeyShrLock, 0},
	{"XMAX_EXCL_LOCK", heap.XmaxExclLock, 0},
	{"KEYS_UPDATED", 0, heap.KeysUpdated},
}

func parseBits(s string) (im, im2 uint16, err error) {
	for _, f := range strings.Fields(s) {
		if f == "-" {
			continue
		}
		known := false
		for _, b := range bitNames {
			if b.name == f {
				im, im2, known = im|b.im, im2|b.im2, true
			}
		}
		if !known {
			return 0, 0, fmt.Errorf("unknown bit %q", f)
		}
	}
	return im, im2, nil
}

// formatBits names the bits of (im, im2), XMAX_SHR_LOCK collapsed.
func formatBits(im, im2 uint16) string {
	var out []string
	for _, b := range bitNames {
		switch {
		case b.im != 0 && im&b.im == b.im:
			out = append(out, b.name)
			im &^= b.im
		case b.im2 != 0 && im2&b.im2 == b.im2:
			out = append(out, b.name)
			im2 &^= b.im2
		}
	}
	if im != 0 || im2 != 0 {
		out = append(out, fmt.Sprintf("0x%04x/0x%04x", im, im2))
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, " ")
}

var statusNames = map[string]multixact.Status{
	"ForKeyShare": multixact.ForKeyShare, "ForShare": multixact.ForShare,
	"ForNoKeyUpdate": multixact.ForNoKeyUpdate, "ForUpdate": multixact.ForUpdate,
	"NoKeyUpdate": multixact.NoKeyUpdate, "Update": multixact.Update,
}

var modeNames = map[string]tuplemode.Mode{
	"KeyShare": tuplemode.KeyShare, "Share": tuplemode.Share, "NoKeyExclusive": tuplemode.NoKeyExclusive, "Exclusive": tuplemode.Exclusive,
}

// xmaxCase is one block of testdata/xmax.txt.
type xmaxCase struct {
	line   int               // first line of the block
	fields map[string]string // key -> value
}

func readXmaxCases(t *testing.T, path string) []xmaxCase {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var cases []xmaxCase
	var cur *xmaxCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			continue
		}
		if line == "" {
			cur = nil
			continue
		}
		if cur == nil {
			cases = append(cases, xmaxCase{line: n, fields: map[string]string{}})
			cur = &cases[len(cases)-1]
		}
		k, v, ok := strings.Cut(line, ":")
		require.True(t, ok, "%s:%d: want \"key: value\"", path, n)
		k = strings.TrimSpace(k)
		_, dup := cur.fields[k]
		require.False(t, dup, "%s:%d: %s given twice", path, n, k)
		cur.fields[k] = strings.TrimSpace(v)
	}
	require.NoError(t, sc.Err())
	return cases
}

// xmaxWorld runs one case: the named transactions and a Locker with just
// what computeNewXmax uses.
type xmaxWorld struct {
	e   *Locker
	xid map[string]uint64 // "T1" -> xid
	tx  map[string]*xact.Xact
}

func (w *xmaxWorld) xidOf(name string) (uint64, error) {
	x, ok := w.xid[name]
	if !ok {
		return 0, fmt.Errorf("transaction %q not in xacts", name)
	}
	return x, nil
}

// parseXacts sets up "T1 running, T2 committed, ...".
func (w *xmaxWorld) parseXacts(s string) error {
	type fate struct{ name, status string }
	var fates []fate
	for _, part := range strings.Split(s, ",") {
		f := strings.Fields(part)
		if len(f) != 2 || !strings.HasPrefix(f[0], "T") {
			return fmt.Errorf("bad xact %q", part)
		}
		fates = append(fates, fate{f[0], f[1]})
	}
	byNum := slices.Clone(fates)
	slices.SortFunc(byNum, func(a, b fate) int {
		an, _ := strconv.Atoi(a.name[1:])
		bn, _ := strconv.Atoi(b.name[1:])
		return an - bn
	})
	live := map[string]*xact.Xact{}
	for _, f := range byNum {
		x := w.e.xacts.Begin()
		w.xid[f.name] = x.ID()
		live[f.name] = x
		if w.tx == nil {
			w.tx = map[string]*xact.Xact{}
		}
		w.tx[f.name] = x
	}
	for _, f := range fates {
		switch f.status {
		case "running":
		case "committed":
			w.e.xacts.Commit(live[f.name])
		case "aborted":
			w.e.xacts.Abort(live[f.name])
		default:
			return fmt.Errorf("bad fate %q", f.status)
		}
	}
	return nil
}

// parseMembers reads "T1:ForShare T2:Update".
func (w *xmaxWorld) parseMembers(s string) ([]multixact.Member, error) {
	var out []multixact.Member
	for _, f := range strings.Fields(s) {
		name, st, ok := strings.Cut(f, ":")
		status, known := statusNames[st]
		if !ok || !known {
			return nil, fmt.Errorf("bad member %q", f)
		}
		x, err := w.xidOf(name)
		if err != nil {
			return nil, err
		}
		out = append(out, multixact.Member{Xid: x, Status: status})
	}
	slices.SortFunc(out, func(a, b multixact.Member) int {
		if a.Xid != b.Xid {
			return int(a.Xid) - int(b.Xid)
		}
		return int(a.Status) - int(b.Status)
	})
	return out, nil
}

// parseOld builds the version whose xmax the case describes.
func (w *xmaxWorld) parseOld(s string) (*heap.Tuple, error) {
	tup := heap.NewFrozenTuple(nil) // xmax invalid
	if s == "none" {
		return tup, nil
	}
	what, bits, ok := strings.Cut(s, "|")
	if !ok {
		return nil, fmt.Errorf("old %q: want \"... | BITS\"", s)
	}
	im, im2, err := parseBits(bits)
	if err != nil {
		return nil, err
	}
	var xmax uint64
	var multi *multixact.MultiXact
	f := strings.Fields(what)
	switch {
	case len(f) == 2 && f[0] == "xid":
		if xmax, err = w.xidOf(f[1]); err != nil {
			return nil, err
		}
	case len(f) == 2 && f[0] == "multi" && f[1] == "reclaimed":
		xmax = 12345 // an id whose multixact is gone
	case len(f) >= 2 && f[0] == "multi":
		members, err := w.parseMembers(strings.Join(f[1:], " "))
		if err != nil {
			return nil, err
		}
		m, err := w.e.multi.Create(members)
		if err != nil {
			return nil, err
		}
		xmax, multi = m.ID(), m
	default:
		return nil, fmt.Errorf("bad old %q", s)
	}
	tup.SetInitialXmax(xmax, multi, im, im2)
	return tup, nil
}

// TestComputeNewXmax runs the decision table of testdata/xmax.txt.
func TestComputeNewXmax(t *testing.T) {
	const path = "testdata/xmax.txt"
	cases := readXmaxCases(t, path)
	require.GreaterOrEqual(t, len(cases), 30)
	rowsSeen := map[string]bool{}
	for _, c := range cases {
		name := c.fields["case"]
		require.NotEmpty(t, name, "%s:%d: no case line", path, c.line)
		for _, row := range []string{"row 1", "row 2a", "row 2b", "row 3", "row 4:", "row 4'", "row 5"} {
			if strings.HasPrefix(name, row) {
				rowsSeen[strings.TrimSuffix(row, ":")] = true
			}
		}
		t.Run(name, func(t *testing.T) {
			at := fmt.Sprintf("%s:%d", path, c.line)
			for _, k := range []string{"xacts", "old", "request", "want"} {
				require.Contains(t, c.fields, k, "%s: missing %s", at, k)
			}
			w := &xmaxWorld{
				e:   NewLocker(nil, xact.NewManager(), multixact.NewStore(), nil, false),
				xid: map[string]uint64{},
			}
			switch opt := c.fields["options"]; opt {
			case "":
			case "ShareFastPathOff":
				w.e.shareFastPathOff = true
			default:
				t.Fatalf("%s: unknown option %q", at, opt)
			}
			require.NoError(t, w.parseXacts(c.fields["xacts"]), at)
			tup, err := w.parseOld(c.fields["old"])
			require.NoError(t, err, at)
			before := *tup

			req := strings.Fields(c.fields["request"])
			require.True(t, len(req) == 2 || len(req) == 3 && req[2] == "update", "%s: bad request", at)
			_, err = w.xidOf(req[0])
			require.NoError(t, err, at)
			me := w.tx[req[0]]
			mode, ok := modeNames[req[1]]
			require.True(t, ok, "%s: bad mode %q", at, req[1])
			isUpdate := len(req) == 3

			nx, err := w.e.computeNewXmax(tup, me, mode, isUpdate)
			require.NoError(t, err, at)
			assert.Equal(t, before, *tup, "%s: computeNewXmax only decides; the tuple is untouched", at)

			what, bits, ok := strings.Cut(c.fields["want"], "|")
			require.True(t, ok, "%s: want \"... | BITS\"", at)
			wantIm, wantIm2, err := parseBits(bits)
			require.NoError(t, err, at)
			assert.Equal(t, formatBits(wantIm, wantIm2), formatBits(nx.im, nx.im2), "%s: bits", at)

			f := strings.Fields(what)
			switch {
			case len(f) == 2 && f[0] == "xid":
				x, err := w.xidOf(f[1])
				require.NoError(t, err, at)
				assert.Equal(t, x, nx.xmax, "%s: xmax", at)
				assert.Nil(t, nx.multi, "%s: want a plain xid, got multixact %v", at, nx.multi)
				assert.False(t, nx.viaMulti, at)
			case len(f) == 2 && f[0] == "same" && f[1] == "multi":
				require.NotNil(t, tup.Multi(), at)
				assert.Same(t, tup.Multi(), nx.multi, "%s: want the old multixact itself", at)
				assert.Equal(t, tup.Xmax(), nx.xmax, at)
			case len(f) >= 2 && f[0] == "multi":
				want, err := w.parseMembers(strings.Join(f[1:], " "))
				require.NoError(t, err, at)
				require.NotNil(t, nx.multi, "%s: want a multixact, got xid %d", at, nx.xmax)
				assert.ElementsMatch(t, want, nx.multi.Members(), "%s: members", at)
				assert.Equal(t, nx.multi.ID(), nx.xmax, "%s: xmax is the multixact id", at)
				assert.True(t, nx.viaMulti, at)
				if tup.Multi() != nil {
					assert.NotSame(t, tup.Multi(), nx.multi, "%s: a new multixact (the old one never changes)", at)
				}
			default:
				t.Fatalf("%s: bad want %q", at, c.fields["want"])
			}
		})
	}
	for _, row := range []string{"row 1", "row 2a", "row 2b", "row 3", "row 4", "row 4'", "row 5"} {
		assert.True(t, rowsSeen[row], "%s has no case for README %s", path, row)
	}
}

// TestMultiHintBits is GetMultiXactIdHintBits for every single member
// status: the bits of the status's lock mode, LOCK_ONLY unless it updates,
// KEYS_UPDATED for ForUpdate and Update.
func TestMultiHintBits(t *testing.T) {
	for _, c := range []struct {
		s    multixact.Status
		bits string
	}{
		{multixact.ForKeyShare, "XMAX_IS_MULTI XMAX_LOCK_ONLY XMAX_KEYSHR_LOCK"},
		{multixact.ForShare, "XMAX_IS_MULTI XMAX_LOCK_ONLY XMAX_SHR_LOCK"},
		{multixact.ForNoKeyUpdate, "XMAX_IS_MULTI XMAX_LOCK_ONLY XMAX_EXCL_LOCK"},
		{multixact.ForUpdate, "XMAX_IS_MULTI XMAX_LOCK_ONLY XMAX_EXCL_LOCK KEYS_UPDATED"},
		{multixact.NoKeyUpdate, "XMAX_IS_MULTI XMAX_EXCL_LOCK"},
		{multixact.Update, "XMAX_IS_MULTI XMAX_EXCL_LOCK KEYS_UPDATED"},
	} {
		m, err := multixact.NewStore().Create([]multixact.Member{{Xid: 1, Status: c.s}})
		require.NoError(t, err)
		im, im2 := multiHintBits(m)
		assert.Equal(t, c.bits, formatBits(im, im2), c.s.String())
	}
}

// TestOldStatusRoundTrip: the status recovered from a single xid's bits is
// the status that wrote them, for every lock mode and both updates.
func TestOldStatusRoundTrip(t *testing.T) {
	for m := tuplemode.KeyShare; m <= tuplemode.Exclusive; m++ {
		im, im2 := lockBits(m)
		assert.Equal(t, status(m, false), oldStatus(im, im2), m.String())
		assert.Equal(t, m, heap.LockModeOfBits(im, im2), m.String())
	}
	assert.Equal(t, multixact.NoKeyUpdate, oldStatus(0, 0))
	assert.Equal(t, multixact.Update, oldStatus(0, heap.KeysUpdated))
	assert.Equal(t, multixact.NoKeyUpdate, status(tuplemode.NoKeyExclusive, true))
	assert.Equal(t, multixact.Update, status(tuplemode.Exclusive, true))
}

// TestConflictsMatchHeavyweightModes: the row-lock conflict table and the
// lock manager's conflicts between the modes' tuple locks agree.
func TestConflictsMatchHeavyweightModes(t *testing.T) {
	for a := tuplemode.KeyShare; a <= tuplemode.Exclusive; a++ {
		for b := tuplemode.KeyShare; b <= tuplemode.Exclusive; b++ {
			assert.Equal(t, conflicts(a, b), lockmgr.Conflicts(hwMode(a), hwMode(b)), "%v × %v", a, b)
		}
	}
}

// TestHeavyweightTable: the tuple locks of two modes conflict in the lock
// manager exactly when the row locks do, so waiters queue behind exactly
// the waiters they could not run beside.
func TestHeavyweightTable(t *testing.T) {
	for a := tuplemode.KeyShare; a <= tuplemode.Exclusive; a++ {
		for b := tuplemode.KeyShare; b <= tuplemode.Exclusive; b++ {
			assert.Equal(t, conflicts(a, b), lockmgr.Conflicts(hwMode(a), hwMode(b)), "%v (%v) / %v (%v)", a, hwMode(a), b, hwMode(b))
		}
	}
}
