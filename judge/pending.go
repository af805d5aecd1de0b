package judge

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// parkRefusal says why the policy's bounds on pending approvals refuse to
// park sub, or "". The plugin's own pending approval does not count: the
// new one supersedes it. busy is true when the bound is on the approvals
// waiting (MaxPending, MaxPendingPerRequester): a decision frees a place,
// and the same submission may then park (Verdict.Retry). A submission too
// large to park never will.
func (j *Judge) parkRefusal(s *epoch, sub *Submission) (reason string, busy bool) {
	p := j.opts.Policy
	if size := pendingSize(sub); size > p.MaxPendingBytes {
		return fmt.Sprintf("needs approval, but its manifest and code are %d bytes, more than the %d a pending approval may hold (judge.Policy.MaxPendingBytes)",
			size, p.MaxPendingBytes), false
	}
	total, mine := s.pendingOthers(sub.Manifest.ID, sub.RequestedBy)
	if total >= p.MaxPending {
		return fmt.Sprintf("needs approval, but %d approvals are already waiting, the most the policy allows (judge.Policy.MaxPending): decide some first", total), true
	}
	if mine >= p.MaxPendingPerRequester {
		return fmt.Sprintf("needs approval, but %s already has %d approvals waiting, the most the policy allows one requester (judge.Policy.MaxPendingPerRequester): decide some first",
			sub.RequestedBy, mine), true
	}
	return "", false
}

// pendingSize is what a pending approval of sub holds: its manifest as
// JSON and its code.
func pendingSize(sub *Submission) int {
	raw, err := json.Marshal(sub.Manifest)
	if err != nil {
		return len(sub.Code) // the manifest gate refuses what does not encode
	}
	return len(raw) + len(sub.Code)
}

// pendingOthers counts the approvals pending for plugins other than plugin
// (whose own a new submission supersedes): all of them, and those
// requestedBy asked for.
func (s *epoch) pendingOthers(plugin, requestedBy string) (total, mine int) {
	for _, a := range s.pending {
		if a.PluginID == plugin {
			continue
		}
		total++
		if a.RequestedBy == requestedBy {
			mine++
		}
	}
	return total, mine
}

// supersede closes every pending approval of plugin: a newer submission
// replaces them, whatever its code, so one plugin id never holds more than
// one approval.
func (s *epoch) supersede(ctx context.Context, plugin string) error {
	for _, id := range slices.Sorted(maps.Keys(s.pending)) {
		if a := s.pending[id]; a.PluginID == plugin {
			if err := s.record(ctx, EventSuperseded, plugin, decisionEvent{ApprovalID: id, CodeHash: a.CodeHash, DecidedBy: "a newer submission"}); err != nil {
				return err
			}
			s.setPending(id, nil)
		}
	}
	return nil
}
