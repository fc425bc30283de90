//go:build invariants

package multixact

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tupled/tupled/internal/invariants"
)

func TestInvariantMembersUnique(t *testing.T) {
	s := NewStore()
	st := fates{1: "running", 2: "running"}
	m := mustCreate(t, s, Member{Xid: 1, Status: ForKeyShare}, Member{Xid: 2, Status: ForShare})
	// Add's caller promises the newcomer is no member (Expand looks first).
	invariants.ExpectViolation(t, invUnique, func() { _, _ = s.Add(m, 2, ForShare, st) })

	// The same on an append in place: m2 has room in its array.
	m2, err := s.Add(m, 3, ForKeyShare, fates{1: "running", 2: "running", 3: "running"})
	require.NoError(t, err)
	require.NotNil(t, m2.arena)
	invariants.ExpectViolation(t, invUnique, func() { _, _ = s.Add(m2, 1, ForKeyShare, st) })

	// Expand of a member is no violation: it returns m itself.
	got, err := s.Expand(m, 2, ForShare, st)
	require.NoError(t, err)
	require.Same(t, m, got)
}

func TestInvariantOneUpdater(t *testing.T) {
	s := NewStore()
	st := fates{1: "running", 2: "running", 3: "running"}
	m := mustCreate(t, s, Member{Xid: 1, Status: ForKeyShare})
	withUpd, err := s.Add(m, 2, NoKeyUpdate, st) // a copy, with room to append
	require.NoError(t, err)
	require.NotNil(t, withUpd.arena)
	// Break the summary an append trusts: it now says "lock-only", so an
	// updater is appended beside the existing one.
	withUpd.updater = 0
	invariants.ExpectViolation(t, invOneUpdater, func() { _, _ = s.Add(withUpd, 3, Update, st) })
}
