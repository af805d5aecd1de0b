package isolated

import "time"

// SetRefillAfter changes how long e's pool waits before it refills.
func SetRefillAfter(e *Executor, d time.Duration) { e.pool.refillIn = d }

// SetSpareFor changes how long e keeps a spare child.
func SetSpareFor(e *Executor, d time.Duration) { e.spares.keepFor = d }

// KillSpares kills the processes of e's spares, which stay kept; it
// reports whether there was one.
func KillSpares(e *Executor) bool {
	e.spares.mu.Lock()
	kept := append([]*spare(nil), e.spares.kept...)
	e.spares.mu.Unlock()
	for _, sp := range kept {
		_ = sp.u.cmd.Process.Kill()
		<-sp.u.exited
	}
	return len(kept) > 0
}
