package adminv1_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/baseline/baselinetest"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// The admin API shows a plugin's transitions and aborts an open one: the
// staged version goes and the version it replaced is back. Seen failing
// with the abort route answering the transition without aborting it (the
// phase stayed transitioning).
func TestTransitions(t *testing.T) {
	ctx := context.Background()
	env := baselinetest.New(t, baselinetest.Options{AdminToken: token})
	srv := httptest.NewServer(env)
	t.Cleanup(srv.Close)
	c := adminv1.New(srv.URL, token, nil)
	v1 := plugin("agent.x", noopCode)
	submit(t, c, v1, adminv1.StatusMounted)
	v2 := v1
	v2.Manifest.Version, v2.Code = "2", noopCode+"\n// two"
	submit(t, c, v2, adminv1.StatusMounted)
	all, err := c.Transitions(ctx)
	if err != nil || len(all) != 1 || all[0].Plugin != "agent.x" || all[0].FromVersion != "1" || all[0].ToVersion != "2" || !all[0].Committed {
		t.Fatalf("Transitions() = %+v, %v; want agent.x 1 -> 2, committed", all, err)
	}

	// A staged version 3, proposed to the kernel and not yet committed.
	m := kernel.Manifest{ID: "agent.x", Version: "3"}
	code := []byte(noopCode + "\n// three")
	auth, err := env.Kernel.Authorize(m, kernel.HashCode(code))
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Kernel.Propose(ctx, kernel.Proposal{Manifest: m, Code: code, Auth: auth}); err != nil {
		t.Fatal(err)
	}
	if tr, err := c.Transition(ctx, "agent.x"); err != nil || tr.Phase != adminv1.PhaseTransitioning || !tr.Switched || tr.Committed {
		t.Fatalf("Transition() = %+v, %v; want an open transition to 3", tr, err)
	}
	tr, err := c.AbortTransition(ctx, "agent.x")
	if err != nil || tr.Phase != adminv1.PhaseAborted || !strings.HasPrefix(tr.Reason, "aborted by ") {
		t.Fatalf("AbortTransition() = %+v, %v; want aborted, with who did it", tr, err)
	}
	if f, _ := fiber(state(t, c), "agent.x"); f.Version != "2" || f.State != adminv1.StateActive {
		t.Fatalf("after the abort agent.x is %s %s, want 2 active", f.Version, f.State)
	}
	var e *adminv1.Error
	if _, err := c.AbortTransition(ctx, "agent.x"); !errors.As(err, &e) || e.Status != http.StatusConflict {
		t.Fatalf("a second abort: %v, want a 409", err)
	}
	if _, err := c.Transition(ctx, "agent.none"); !errors.As(err, &e) || e.Status != http.StatusNotFound {
		t.Fatalf("the transition of a plugin without one: %v, want a 404", err)
	}
}
