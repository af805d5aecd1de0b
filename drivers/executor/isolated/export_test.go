package isolated

import "time"

// SetRefillAfter changes how long e's pool waits before it refills.
func SetRefillAfter(e *Executor, d time.Duration) { e.pool.refillIn = d }
