package kernel

import (
	"encoding/json"
	"maps"
	"slices"
)

// activationData is the payload of fiber/activating, fiber/activated and
// fiber/failed: the code the activation ran, so a count of failures in a
// row never mixes two versions of a plugin (a staged version that crashed
// is not the committed one), and whether the activation was cut short by
// its caller or the kernel stopping (Cancelled), which is nobody's failure.
type activationData struct {
	CodeHash  string `json:"codeHash,omitempty"`
	Error     string `json:"error,omitempty"`
	Cancelled bool   `json:"cancelled,omitempty"`
}

// streak is one plugin's run of failed activations of one version.
type streak struct {
	hash            string
	failed, crashed int
	open            bool // a fiber/activating has no outcome yet
}

// streaks counts, per plugin, its activations that failed in a row as the
// log tells them. An activation is open between fiber/activating and its
// outcome; one still open at the next fiber/activating, or at the end of
// the log, was cut short by the process dying.
type streaks map[string]*streak

func (s streaks) reset(id string) { delete(s, id) }

// of returns id's streak for code hash, starting a new one when the
// version changed.
func (s streaks) of(id, hash string) *streak {
	st := s[id]
	if st == nil || st.hash != hash {
		st = &streak{hash: hash}
		s[id] = st
	}
	return st
}

// apply folds one fiber/* event.
func (s streaks) apply(e Event) {
	var d activationData
	if len(e.Data) > 0 {
		_ = json.Unmarshal(e.Data, &d) // an unreadable payload counts as no code hash
	}
	st := s.of(e.Plugin, d.CodeHash)
	switch e.Type {
	case EventFiberActivating:
		st.closeOpen()
		st.open = true
	case EventFiberActivated:
		s.reset(e.Plugin)
	case EventFiberFailed:
		st.open = false
		if !d.Cancelled {
			st.failed++
		}
	}
}

// closeOpen counts an activation left open as a crash.
func (st *streak) closeOpen() {
	if st.open {
		st.failed++
		st.crashed++
		st.open = false
	}
}

// finish closes every open activation and writes the counts into the
// targets whose code they are of.
func (s streaks) finish(targets map[string]Target) {
	for _, id := range slices.Sorted(maps.Keys(s)) {
		st := s[id]
		st.closeOpen()
		if t, ok := targets[id]; ok && st.hash == t.CodeHash {
			t.Failures, t.Crashes = st.failed, st.crashed
			targets[id] = t
		}
	}
}
