package executortest

import (
	"context"
	"errors"
	"testing"
	"time"
)

var hostContextCases = []testCase{
	{"HostCallEndsAtCallDeadline", testHostCallDeadline},
	{"HostCallEndsAtActivationDeadline", testHostActivationDeadline},
	{"HostCallEndsWhenCallerLeaves", testHostCallCallerLeaves},
}

// guard bounds every wait of these cases. It only keeps a broken executor
// from hanging the test; nothing is measured against it.
const guard = time.Minute

// A host call made by a call whose deadline passes sees its context end,
// and the call fails saying the deadline passed.
// Seen failing without the fix (isolated): the parent served host calls
// under the caller's context alone, so the service blocked until its guard
// and the call returned only then. Seen failing (goja) with the deadline
// taken out of the job's host context and that context no longer
// cancelled when the job ends.
func testHostCallDeadline(t *testing.T, f Factory) {
	env := NewEnv(t, f(t, short))
	m := agent("agent.slow")
	m.Inject = []string{KeyService}
	mustMount(t, env.K, m, toolPlugin("slow", `async () => cap.invoke('svc', 'block')`))
	done := make(chan error, 1)
	go func() {
		_, err := tool(t, env.K, "slow")(context.Background())
		done <- err
	}()
	wantUnblocked(t, env.Service, nil)
	wantErr(t, waitFor(t, done, "the call"), "deadline")
}

// The same holds for a host call an activation makes: the mount fails at
// the activation's deadline, and the host function saw its context end.
// Seen failing as HostCallEndsAtCallDeadline was, on both executors.
func testHostActivationDeadline(t *testing.T, f Factory) {
	env := NewEnv(t, f(t, short))
	m := agent("agent.slowstart")
	m.Inject = []string{KeyService}
	done := make(chan error, 1)
	go func() {
		done <- mount(context.Background(), env.K, m, `export default async function activate(cap) {
	await cap.invoke('svc', 'block');
}`)
	}()
	wantUnblocked(t, env.Service, nil)
	wantErr(t, waitFor(t, done, "the mount"), "deadline")
}

// A host call made by a call whose caller leaves (its context is
// cancelled: an HTTP client went away) sees its context cancelled before
// the call's deadline, and the call fails with the cancellation.
// Seen failing (isolated) with the host context made from
// context.WithoutCancel(ctx) and not cancelled when the request returns:
// the service saw the deadline 20 s later, not the cancellation.
func testHostCallCallerLeaves(t *testing.T, f Factory) {
	env := NewEnv(t, f(t, normal))
	m := agent("agent.left")
	m.Inject = []string{KeyService}
	mustMount(t, env.K, m, toolPlugin("slow", `async () => cap.invoke('svc', 'block')`))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := tool(t, env.K, "slow")(ctx)
		done <- err
	}()
	select {
	case <-env.Service.Blocked():
	case <-time.After(guard):
		t.Fatal("the host call did not start")
	}
	cancel()
	wantUnblocked(t, env.Service, context.Canceled)
	if err := waitFor(t, done, "the call"); !errorsIsCanceled(err) {
		t.Fatalf("call error = %v, want a cancellation", err)
	}
}

// wantUnblocked waits for a "block" host call to end and fails unless its
// context ended, with want when want is not nil.
func wantUnblocked(t *testing.T, s *Service, want error) {
	t.Helper()
	select {
	case err := <-s.Unblocked():
		if err == nil {
			t.Fatal("the host call's context never ended")
		}
		if want != nil && !errors.Is(err, want) {
			t.Fatalf("the host call's context ended with %v, want %v", err, want)
		}
	case <-time.After(blockGuard + guard):
		t.Fatal("the host call never ended")
	}
}

// waitFor returns what done receives, failing the test if nothing comes.
func waitFor(t *testing.T, done <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(guard):
		t.Fatalf("%s did not return", what)
		return nil
	}
}
