package isolated_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sms-baseline/sms/drivers/executor/isolated"
	"github.com/sms-baseline/sms/kernel"
)

// load loads a small plugin for who ("" for nobody) and closes it when the
// test ends.
func load(t *testing.T, exec *isolated.Executor, id, who string) (kernel.Unit, error) {
	t.Helper()
	code := []byte(`export default async function activate(cap) {}`)
	ctx := context.Background()
	if who != "" {
		ctx = kernel.WithRequester(ctx, who)
	}
	u, err := exec.Load(ctx, kernel.Bundle{Manifest: kernel.Manifest{ID: id, Version: "1"}, Code: code, CodeHash: kernel.HashCode(code)})
	if err == nil {
		t.Cleanup(func() { _ = u.Close() })
	}
	return u, err
}

func mustLoad(t *testing.T, exec *isolated.Executor, id, who string) kernel.Unit {
	t.Helper()
	u, err := load(t, exec, id, who)
	if err != nil {
		t.Fatalf("load %s for %q: %v", id, who, err)
	}
	return u
}

// wantLimit fails unless err is a refusal for a bound, with a code that
// maps to a client error, naming the bound.
func wantLimit(t *testing.T, err error, bound string) {
	t.Helper()
	if !errors.Is(err, isolated.ErrLimit) || kernel.CodeOf(err) != kernel.CodeConflict {
		t.Fatalf("error = %v, want ErrLimit with code %s", err, kernel.CodeConflict)
	}
	if !strings.Contains(err.Error(), bound) {
		t.Fatalf("error %q does not name %s", err, bound)
	}
}

// Past MaxChildren a load is refused, naming the limit, and starts no
// process; closing a unit frees its place.
// Seen failing without the fix: the third load started a third child.
func TestLoadPastMaxChildrenIsRefused(t *testing.T) {
	exec := newExecutor(t, isolated.Options{MaxChildren: 2})
	first := mustLoad(t, exec, "agent.a", "")
	mustLoad(t, exec, "agent.b", "")
	_, err := load(t, exec, "agent.c", "")
	wantLimit(t, err, "MaxChildren")
	if got := exec.Live(); got != 2 {
		t.Fatalf("live children = %d, want 2", got)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	mustLoad(t, exec, "agent.c", "")
}

// Past MaxChildrenPerRequester a load for that requester is refused,
// naming the requester and the limit; others still load, and unloading
// frees the requester's place.
// Seen failing without the fix: alice's second load succeeded.
func TestLoadPastRequesterShareIsRefused(t *testing.T) {
	exec := newExecutor(t, isolated.Options{MaxChildrenPerRequester: 1})
	alice := mustLoad(t, exec, "agent.a1", "alice")
	_, err := load(t, exec, "agent.a2", "alice")
	wantLimit(t, err, "MaxChildrenPerRequester")
	if !strings.Contains(err.Error(), `"alice"`) {
		t.Fatalf("error %q does not name the requester", err)
	}
	mustLoad(t, exec, "agent.b1", "bob")
	mustLoad(t, exec, "agent.restored", "") // a load nobody asked for counts only in total
	if err := alice.Close(); err != nil {
		t.Fatal(err)
	}
	mustLoad(t, exec, "agent.a2", "alice")
}

// Past MemoryBudget, the sum of the children's memory limits, a load is
// refused naming the budget.
// Seen failing without the fix: the third child started.
func TestLoadPastMemoryBudgetIsRefused(t *testing.T) {
	exec := newExecutor(t, isolated.Options{MemoryLimit: 128 << 20, MemoryBudget: 300 << 20})
	first := mustLoad(t, exec, "agent.m1", "")
	mustLoad(t, exec, "agent.m2", "")
	_, err := load(t, exec, "agent.m3", "")
	wantLimit(t, err, "MemoryBudget")
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	mustLoad(t, exec, "agent.m3", "")
}

// Warm children count against MaxChildren: the pool keeps only the room
// loads leave it, and a load takes a warm child instead of passing the
// bound.
// Seen failing without the fix: the pool kept two warm children next to
// the loaded one, three processes under a bound of two.
func TestWarmChildrenCountAgainstMaxChildren(t *testing.T) {
	exec := newExecutor(t, isolated.Options{MaxChildren: 2, Warm: 2})
	isolated.SetRefillAfter(exec, time.Millisecond)
	mustLoad(t, exec, "agent.w1", "")
	// Polling until the pool has filled what it may; the guard only keeps
	// a broken pool from hanging the test.
	for guard := time.Now().Add(time.Minute); exec.Ready() < 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(guard) {
			t.Fatal("the pool never started a warm child")
		}
	}
	time.Sleep(50 * time.Millisecond) // let a refill past the bound, if any, show
	if live, ready := exec.Live(), exec.Ready(); live != 2 || ready != 1 {
		t.Fatalf("live = %d, ready = %d; want 2 and 1", live, ready)
	}
	mustLoad(t, exec, "agent.w2", "") // takes the warm child
	_, err := load(t, exec, "agent.w3", "")
	wantLimit(t, err, "MaxChildren")
}

// Past MaxUnits, units loaded at once whether awake or asleep, a load is
// refused naming the bound, and per requester past MaxUnitsPerRequester;
// closing a unit frees its place. Sleeping plugins hold no child, so the
// bounds on children no longer bound how many plugins a kernel holds.
// Seen failing with admit left out: the third load succeeded.
func TestLoadPastMaxUnitsIsRefused(t *testing.T) {
	exec := newExecutor(t, isolated.Options{MaxUnits: 2, MaxUnitsPerRequester: 1})
	first := mustLoad(t, exec, "agent.u1", "alice")
	_, err := load(t, exec, "agent.u2", "alice")
	wantLimit(t, err, "MaxUnitsPerRequester")
	mustLoad(t, exec, "agent.u3", "")
	_, err = load(t, exec, "agent.u4", "bob")
	wantLimit(t, err, "MaxUnits")
	if got := exec.Live(); got != 2 {
		t.Fatalf("live children = %d, want 2: a refused load starts none", got)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	mustLoad(t, exec, "agent.u4", "bob")
}
