package adminv1

import (
	"slices"
	"time"
)

// ApprovalDecision is one approver's approval of a pending Approval that
// needs several approvers.
type ApprovalDecision struct {
	By string    `json:"by"`
	At time.Time `json:"at"`
	// Groups are the approver's groups the policy names.
	Groups []string `json:"groups,omitempty"`
}

// Replaced is the committed version a pending plugin would replace:
// approving it is approving its declaration, and what Added and Removed
// say it changes from this one, and its code, whose diff from this
// version's is CodeDiff.
type Replaced struct {
	Version     string      `json:"version"`
	CodeHash    string      `json:"codeHash"`
	Manifest    Manifest    `json:"manifest"`
	CodeDiff    string      `json:"codeDiff"`
	Note        string      `json:"note,omitempty"`
	Declaration Declaration `json:"declaration,omitzero"`
	// Added and Removed are what the new declaration has that this one
	// has not, and what it drops: points, scopes, keys, routes with
	// their paths, schedules and other declarative items (the ORM's
	// models and fields among them).
	Added   Declaration `json:"added,omitzero"`
	Removed Declaration `json:"removed,omitzero"`
}

// Changes returns what declaration d adds to old and what it removes.
func (d Declaration) Changes(old Declaration) (added, removed Declaration) {
	d, old = d.Normal(), old.Normal()
	minus := func(a, b []string) []string {
		var out []string
		for _, x := range a {
			if !slices.Contains(b, x) {
				out = append(out, x)
			}
		}
		return out
	}
	added = Declaration{Points: minus(d.Points, old.Points), Scopes: minus(d.Scopes, old.Scopes),
		Inject: minus(d.Inject, old.Inject), Optional: minus(d.Optional, old.Optional), Provide: minus(d.Provide, old.Provide),
		Routes: minus(d.Routes, old.Routes), Schedules: minus(d.Schedules, old.Schedules),
		Contributions: minus(d.Contributions, old.Contributions)}
	removed = Declaration{Points: minus(old.Points, d.Points), Scopes: minus(old.Scopes, d.Scopes),
		Inject: minus(old.Inject, d.Inject), Optional: minus(old.Optional, d.Optional), Provide: minus(old.Provide, d.Provide),
		Routes: minus(old.Routes, d.Routes), Schedules: minus(old.Schedules, d.Schedules),
		Contributions: minus(old.Contributions, d.Contributions)}
	return added, removed
}
