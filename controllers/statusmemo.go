package controllers

import (
	"crypto/sha256"
	"encoding/json"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	smsv1 "github.com/sms-baseline/sms/api/v1"
)

// countsInterval is how often, at most, a Tenant's status is written when
// only its plugin counts changed: a burst of mounts costs the API server
// one write per interval, not one per Plugin.
const countsInterval = 2 * time.Second

// statusMemo remembers what the controllers last wrote. A reconcile that
// starts from a cached copy older than its own last patch (a second
// reconcile of an object before the cache has seen the first's write)
// computes the same status again; the memo keeps it from patching it
// twice. Only the operator writes these statuses (the status subresource
// is its alone), so what it last wrote is what the server holds. Safe for
// concurrent use; the zero value is ready.
type statusMemo struct {
	mu      sync.Mutex
	last    map[types.UID][sha256.Size]byte // the status last patched, hashed
	counts  map[types.UID]time.Time         // when a Tenant's plugin counts were last written
	patched map[types.UID]struct{}          // objects whose status this process has sent a patch for
	leading time.Time                       // when this process began to lead; zero before
}

// skewAllowance is how far the API server's clock (creation timestamps)
// may be ahead of this process's before untouched trusts the comparison.
const skewAllowance = 2 * time.Second

// lead records that this process leads from now on: the controllers run.
func (m *statusMemo) lead(now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.leading = now
}

// statusSum hashes obj's status as it would be sent, less its conditions'
// lastTransitionTime: a reconcile from a stale copy computes the same
// transition a moment later, and the time the server holds is the truer.
func statusSum(obj client.Object) ([sha256.Size]byte, bool) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return [sha256.Size]byte{}, false
	}
	var o struct {
		Status map[string]any `json:"status"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return [sha256.Size]byte{}, false
	}
	if conds, ok := o.Status["conditions"].([]any); ok {
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok {
				delete(m, "lastTransitionTime")
			}
		}
	}
	raw, err = json.Marshal(o.Status) // maps marshal with sorted keys
	if err != nil {
		return [sha256.Size]byte{}, false
	}
	return sha256.Sum256(raw), true
}

// written reports whether sum is the status last patched onto uid.
func (m *statusMemo) written(uid types.UID, sum [sha256.Size]byte) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	last, ok := m.last[uid]
	return ok && last == sum
}

// wrote records a successful patch of uid's status to sum.
func (m *statusMemo) wrote(uid types.UID, sum [sha256.Size]byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last == nil {
		m.last = map[types.UID][sha256.Size]byte{}
	}
	m.last[uid] = sum
}

// sending records that a patch of uid's status is about to be sent; it
// may land even when its answer is an error.
func (m *statusMemo) sending(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.patched == nil {
		m.patched = map[types.UID]struct{}{}
	}
	m.patched[uid] = struct{}{}
}

// untouched reports whether obj's status can hold no write the cache has
// not shown: obj was created after this process began to lead (so no
// earlier leader, whose last patches may still be on their way through
// this process's watch, ever wrote it; its creation timestamp is compared
// a whole second and skewAllowance past the start), and this process
// never sent a patch of its status.
func (m *statusMemo) untouched(obj client.Object) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.leading.IsZero() {
		return false
	}
	created := obj.GetCreationTimestamp().Time
	if !created.After(m.leading.Add(skewAllowance).Truncate(time.Second)) {
		return false
	}
	_, ok := m.patched[obj.GetUID()]
	return !ok
}

// forget drops the status the memo holds of uid, after a patch that may
// not have landed or for an object that is going away.
func (m *statusMemo) forget(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.last, uid)
	delete(m.counts, uid)
}

// gone drops everything the memo holds of an object that is going away.
func (m *statusMemo) gone(uid types.UID) {
	m.forget(uid)
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.patched, uid)
}

// countsWait returns how long a Tenant whose status differs from what it
// was only in its plugin counts waits before those are written: zero when
// none were written within countsInterval.
func (m *statusMemo) countsWait(uid types.UID, now time.Time) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if at, ok := m.counts[uid]; ok {
		return max(at.Add(countsInterval).Sub(now), 0)
	}
	return 0
}

// countsWritten records that a Tenant's plugin counts were written now.
func (m *statusMemo) countsWritten(uid types.UID, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.counts == nil {
		m.counts = map[types.UID]time.Time{}
	}
	m.counts[uid] = now
}

// onlyCounts reports whether after differs from before in its plugin
// counts and budget use alone (not its taint, users or conditions): the
// figures that move with traffic, written at most once per interval.
func onlyCounts(before, after *smsv1.TenantStatus) bool {
	c := before.DeepCopy()
	c.Plugins, c.Budget = after.Plugins, after.Budget
	return equality.Semantic.DeepEqual(*c, *after)
}
