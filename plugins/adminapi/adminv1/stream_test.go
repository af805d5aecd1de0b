package adminv1_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sms-baseline/sms/baseline/baselinetest"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// errEnough stops a Follow once the test saw what it waited for.
var errEnough = errors.New("enough")

// TestFollowSeesNewEventsAndResumes: Follow delivers events as they are
// appended, in order, and a second Follow after the last seen sequence
// number starts exactly there. Seen failing with Last-Event-ID not sent
// (the resumed stream replayed the log from its start).
func TestFollowSeesNewEventsAndResumes(t *testing.T) {
	c := serve(t, baselinetest.Options{Approvals: true})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got := make(chan adminv1.Event, 256)
	done := make(chan error, 1)
	go func() {
		done <- c.Follow(ctx, adminv1.FollowOptions{}, func(e adminv1.Event) error {
			got <- e
			if e.Plugin == "agent.second" && e.Type == "plugin/mounted" {
				return errEnough
			}
			return nil
		})
	}()
	submit(t, c, plugin("agent.first", noopCode), adminv1.StatusMounted)
	submit(t, c, plugin("agent.second", noopCode), adminv1.StatusMounted)
	if err := <-done; !errors.Is(err, errEnough) {
		t.Fatalf("Follow = %v, want the callback's error", err)
	}
	close(got)
	var seqs []int64
	var firstMounted int64
	for e := range got {
		if n := len(seqs); n > 0 && e.Seq != seqs[n-1]+1 {
			t.Fatalf("sequence %d follows %d", e.Seq, seqs[n-1])
		}
		seqs = append(seqs, e.Seq)
		if e.Plugin == "agent.first" && e.Type == "plugin/mounted" {
			firstMounted = e.Seq
		}
	}
	if firstMounted == 0 {
		t.Fatalf("never saw agent.first mounted in %v", seqs)
	}
	err := c.Follow(ctx, adminv1.FollowOptions{After: firstMounted}, func(e adminv1.Event) error {
		if e.Seq != firstMounted+1 {
			t.Errorf("resumed at %d, want %d", e.Seq, firstMounted+1)
		}
		return errEnough
	})
	if !errors.Is(err, errEnough) {
		t.Fatalf("resumed Follow = %v", err)
	}
}

// TestFollowGivesUpOnASilentKernel: a kernel that accepts the stream and
// then sends nothing (no keepalive either) ends Follow with an error after
// the idle limit instead of blocking forever. Seen failing (the test timed
// out) with the idle timer not started.
func TestFollowGivesUpOnASilentKernel(t *testing.T) {
	hung := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-hung:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(hung)
	c := adminv1.New(srv.URL, token, nil)
	start := time.Now()
	err := c.Follow(context.Background(), adminv1.FollowOptions{Idle: 300 * time.Millisecond}, func(adminv1.Event) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "idle") {
		t.Fatalf("Follow = %v, want an idle error", err)
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Fatalf("Follow gave up after %s", waited)
	}
}

// TestPluginStatus reads one plugin: its fiber once mounted, its pending
// approval while it waits, and a 404 for an id the kernel does not know.
func TestPluginStatus(t *testing.T) {
	c := serve(t, baselinetest.Options{Approvals: true})
	ctx := context.Background()
	submit(t, c, plugin("agent.noop", noopCode), adminv1.StatusMounted)
	submit(t, c, plugin("agent.route", routeCode), adminv1.StatusPending)
	s, err := c.PluginStatus(ctx, "agent.noop")
	if err != nil || s.Fiber == nil || s.Fiber.State != adminv1.StateActive || len(s.Pending) != 0 {
		t.Fatalf("PluginStatus(agent.noop) = %+v, %v", s, err)
	}
	s, err = c.PluginStatus(ctx, "agent.route")
	if err != nil || s.Fiber != nil || len(s.Pending) != 1 || s.Pending[0].PluginID != "agent.route" {
		t.Fatalf("PluginStatus(agent.route) = %+v, %v", s, err)
	}
	if _, err := c.PluginStatus(ctx, "agent.ghost"); !adminv1.IsNotFound(err) {
		t.Fatalf("PluginStatus(agent.ghost) = %v, want a 404", err)
	}
}

// TestFollowGivesUpOnAKernelThatNeverAnswers: a kernel that accepts the
// connection and never sends its headers is given up on after the idle
// limit too. Seen failing (the test timed out) with the idle timer started
// only once the headers arrived.
func TestFollowGivesUpOnAKernelThatNeverAnswers(t *testing.T) {
	hung := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-hung:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(hung)
	c := adminv1.New(srv.URL, token, nil)
	opened := false
	err := c.Follow(context.Background(), adminv1.FollowOptions{Idle: 300 * time.Millisecond, Open: func() { opened = true }},
		func(adminv1.Event) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "idle") || opened {
		t.Fatalf("Follow = %v (opened %t), want an idle error before the stream opened", err, opened)
	}
}
