package controllers

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	smsv1 "github.com/sms-baseline/sms/api/v1"
)

// A submission may skip the live read only for a Plugin created after
// this process began to lead (a second and the skew allowance after) whose
// status it never patched: a Plugin an earlier leader may have written,
// one this process patched, and any before the controllers run are read.
// Seen failing (the Plugin from before the leadership skipped the read)
// with untouched ignoring when leadership began.
func TestUntouchedOnlyAfterLeadingBegan(t *testing.T) {
	start := time.Date(2026, 12, 4, 10, 0, 0, 500_000_000, time.UTC)
	plugin := func(uid string, created time.Time) *smsv1.Plugin {
		p := &smsv1.Plugin{}
		p.UID, p.CreationTimestamp = k8stypes.UID("uid-"+uid), metav1.NewTime(created.Truncate(time.Second)) // as the API server stores it
		return p
	}
	var m statusMemo
	late := plugin("late", start.Add(time.Minute))
	if m.untouched(late) {
		t.Fatal("untouched before the controllers began to lead")
	}
	m.lead(start)
	for _, c := range []struct {
		name string
		p    *smsv1.Plugin
		want bool
	}{
		{"created before leading began", plugin("early", start.Add(-time.Minute)), false},
		{"created within the allowance", plugin("edge", start.Add(skewAllowance)), false},
		{"created later", late, true},
	} {
		if got := m.untouched(c.p); got != c.want {
			t.Errorf("%s: untouched = %v, want %v", c.name, got, c.want)
		}
	}
	m.sending(late.UID)
	if m.untouched(late) {
		t.Error("untouched after a patch of its status was sent")
	}
}
