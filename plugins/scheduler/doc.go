// Package scheduler is the system plugin that runs jobs at fixed intervals:
// plugins contribute {name, everyMs, handler} to the schedule point and the
// composition root calls Service.Tick from its own ticker. The plugin starts
// no goroutines and has no clock of its own: time is whatever Tick is given.
//
// Invariants:
//   - a job is due when it has never run or when now minus its last run is
//     at least everyMs; a due job runs once per tick;
//   - every run's time and outcome is written to the scheduler_runs table
//     before the next job starts, so a restart neither repeats a run nor
//     skips one; a run whose record could not be written (or whose process
//     died mid-run) runs again on the next tick: delivery is at least once;
//   - a failed run counts as a run: it is recorded with its error and the
//     job is retried when it is next due, not on the next tick, so a
//     broken job cannot run hot;
//   - job names are unique among live jobs and everyMs is at least 1000; a
//     clashing or malformed job is rejected, failing only its plugin;
//   - a withdrawn job stops running at once and keeps its row, so enabling
//     its plugin again does not run it early.
package scheduler
