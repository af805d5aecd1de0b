package rpc

import (
	"strings"
	"testing"

	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// TestFlightBounds: a caller past its own bound is refused while others
// still get in, and the kernel's bound refuses everyone; releasing frees
// the slot. Seen failing with the release not decrementing the caller's
// count (alice stayed refused).
func TestFlightBounds(t *testing.T) {
	f := newFlight(2, 3)
	alice := callerOf(smshttp.Principal{Authenticated: true, UserID: 7})
	bob := callerOf(smshttp.Principal{Authenticated: true, Name: "bob"})
	r1, err := f.acquire(alice)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.acquire(alice); err != nil {
		t.Fatal(err)
	}
	if _, err := f.acquire(alice); err == nil || !strings.Contains(err.Error(), "user 7 has 2 batches in flight; the limit is 2 per caller") {
		t.Fatalf("alice's third batch: %v", err)
	}
	if _, err := f.acquire(bob); err != nil {
		t.Fatalf("bob is refused for alice's batches: %v", err)
	}
	if _, err := f.acquire(callerOf(smshttp.Principal{})); err == nil || !strings.Contains(err.Error(), "the limit is 3 per kernel") {
		t.Fatalf("a fourth batch in the kernel: %v", err)
	}
	r1()
	if _, err := f.acquire(alice); err != nil {
		t.Fatalf("alice after a release: %v", err)
	}
	if k := smshttp.KindOf(mustErr(f.acquire(alice))); k != smshttp.KindTooMany {
		t.Fatalf("kind %s, want too_many (429)", k)
	}
}

func mustErr(_ func(), err error) error { return err }
