package heap_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/tuplemode"
)

// TestInfomaskHelpers checks the macros against every xmax encoding of the
// table in tuplelock/README.md ("Infomask encoding").
func TestInfomaskHelpers(t *testing.T) {
	const none = tuplemode.Mode(255) // LockModeOfBits is meaningless for non-lockers
	for _, c := range []struct {
		state                    string
		im, im2                  uint16
		lockedOnly, shr, excl, k bool
		mode                     tuplemode.Mode
	}{
		{"no xmax", heap.XmaxInvalid, 0, false, false, false, false, none},
		{"one FOR KEY SHARE locker", heap.XmaxLockOnly | heap.XmaxKeyShrLock, 0, true, false, false, true, tuplemode.KeyShare},
		{"one FOR SHARE locker", heap.XmaxLockOnly | heap.XmaxShrLock, 0, true, true, false, false, tuplemode.Share},
		{"one FOR NO KEY UPDATE locker", heap.XmaxLockOnly | heap.XmaxExclLock, 0, true, false, true, false, tuplemode.NoKeyExclusive},
		{"one FOR UPDATE locker", heap.XmaxLockOnly | heap.XmaxExclLock, heap.KeysUpdated, true, false, true, false, tuplemode.Exclusive},
		{"non-key updater", 0, 0, false, false, false, false, none},
		{"deleter", 0, heap.KeysUpdated, false, false, false, false, none},
		{"lock-only multixact, strongest FOR SHARE", heap.XmaxIsMulti | heap.XmaxLockOnly | heap.XmaxShrLock, 0, true, true, false, false, none},
		{"multixact with an updater", heap.XmaxIsMulti | heap.XmaxExclLock, 0, false, false, true, false, none},
	} {
		t.Run(c.state, func(t *testing.T) {
			// Unrelated bits (xmin hints, HEAP_UPDATED, xmax hints) never
			// change the answers.
			for _, extra := range []uint16{0, heap.XminCommitted | heap.Updated, heap.XminFrozen | heap.XmaxInvalid} {
				im := c.im | extra
				assert.Equal(t, c.lockedOnly, heap.IsLockedOnly(im), "IsLockedOnly(%#x)", im)
				assert.Equal(t, c.shr, heap.IsShrLocked(im), "IsShrLocked(%#x)", im)
				assert.Equal(t, c.excl, heap.IsExclLocked(im), "IsExclLocked(%#x)", im)
				assert.Equal(t, c.k, heap.IsKeyShrLocked(im), "IsKeyShrLocked(%#x)", im)
				if c.mode != none {
					assert.Equal(t, c.mode, heap.LockModeOfBits(im, c.im2), "LockModeOfBits(%#x, %#x)", im, c.im2)
				}
			}
		})
	}
}

func TestShareLockIsTheCombinationOfTwoBits(t *testing.T) {
	assert.Equal(t, heap.XmaxExclLock|heap.XmaxKeyShrLock, heap.XmaxShrLock)
	assert.Equal(t, uint16(0x0050), heap.LockMask)
	assert.Equal(t, heap.XminCommitted|heap.XminInvalid, heap.XminFrozen)
	// The bits PostgreSQL clears whenever xmax is replaced.
	assert.Equal(t, uint16(0x1cd0), heap.XmaxBits)
}
