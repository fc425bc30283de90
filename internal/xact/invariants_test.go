//go:build invariants

package xact

import (
	"testing"

	"github.com/tupled/tupled/internal/invariants"
)

func TestInvariantClogFinalOnce(t *testing.T) {
	t.Run("committed then aborted", func(t *testing.T) {
		m := NewManager()
		x := m.Begin()
		m.Commit(x)
		invariants.ExpectViolation(t, invClogFinal, func() { m.clog.set(x.ID(), clogAborted) })
	})
	t.Run("committed twice", func(t *testing.T) {
		m := NewManager()
		x := m.Begin()
		m.Commit(x)
		invariants.ExpectViolation(t, invClogFinal, func() { m.Commit(x) })
	})
	t.Run("aborted subtransaction committed with its top", func(t *testing.T) {
		m := NewManager()
		top := m.Begin()
		sub := m.BeginSub(top)
		m.clog.set(sub.ID(), clogAborted) // aborted, but still listed under top
		invariants.ExpectViolation(t, invClogFinal, func() { m.Commit(top) })
	})
	t.Run("back to in progress", func(t *testing.T) {
		m := NewManager()
		x := m.Begin()
		m.Abort(x)
		invariants.ExpectViolation(t, invClogFinal, func() { m.clog.set(x.ID(), clogInProgress) })
	})
}
