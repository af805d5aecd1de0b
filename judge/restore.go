package judge

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sms-baseline/sms/kernel"
)

var _ kernel.RestoreGuard = (*Judge)(nil)

// minApprovalKeyDigits is the shortest submission-key suffix an approval
// id in the log may carry: earlier kernels kept 12 hex digits.
const minApprovalKeyDigits = 12

// VetRestore implements kernel.RestoreGuard: it holds a restart to what the
// judge decided.
//
//   - An install the log has no plugin/mounted for (a log written before the
//     kernel committed mounts) counts as committed when the judge's own
//     judge/mounted names the same plugin, manifest and code (its
//     submission key); a row written by hand has none and stays refused.
//   - A plugin whose declaration is sensitive under the current policy is
//     refused unless the log holds a judge/approved for this plugin, code
//     hash and manifest (the approval id carries the submission key), or
//     the policy auto-approves. A plugin mounted under an older, laxer
//     policy is refused too: submit it again for a decision.
func (j *Judge) VetRestore(events []kernel.Event, targets map[string]kernel.Target) kernel.RestoreVetting {
	mounted, approved := restoreRecords(events)
	v := kernel.RestoreVetting{Refused: map[string]string{}, Committed: map[string]bool{}}
	for id, t := range targets {
		key := submissionKey(t.Manifest, t.CodeHash)
		if !t.Committed && mounted[id][key] {
			v.Committed[id] = true
		}
		reasons := j.sensitiveManifest(t.Manifest)
		if len(reasons) == 0 || j.opts.Policy.AutoApprove || approvedFor(approved[id], id, key, t.CodeHash) {
			continue
		}
		v.Refused[id] = fmt.Sprintf("it needs approval (%s) and the log has no approval of this code and manifest", joinReasons(reasons))
	}
	return v
}

// restoreRecords reads the judge's judge/mounted submission keys and its
// judge/approved decisions, by plugin, from the log. An unreadable
// payload counts for nothing.
func restoreRecords(events []kernel.Event) (map[string]map[string]bool, map[string][]decisionEvent) {
	mounted, approved := map[string]map[string]bool{}, map[string][]decisionEvent{}
	for _, e := range events {
		switch e.Type {
		case EventMounted:
			var m mountedEvent
			if json.Unmarshal(e.Data, &m) == nil && m.Key != "" {
				if mounted[e.Plugin] == nil {
					mounted[e.Plugin] = map[string]bool{}
				}
				mounted[e.Plugin][m.Key] = true
			}
		case EventApproved:
			var d decisionEvent
			if json.Unmarshal(e.Data, &d) == nil {
				approved[e.Plugin] = append(approved[e.Plugin], d)
			}
		}
	}
	return mounted, approved
}

// approvedFor reports whether one of the decisions approved plugin's
// submission with this key and code hash.
func approvedFor(decisions []decisionEvent, plugin, key, codeHash string) bool {
	for _, d := range decisions {
		suffix, ok := strings.CutPrefix(d.ApprovalID, plugin+"-")
		if ok && d.CodeHash == codeHash && len(suffix) >= minApprovalKeyDigits && strings.HasPrefix(key, suffix) {
			return true
		}
	}
	return false
}
