package auth

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// With every hashing slot taken, a login is refused at once with ErrBusy,
// a 429, before it reads a user or waits. Seen failing with hashing
// blocking on the channel (the test hung) instead of selecting.
func TestLoginBusy(t *testing.T) {
	s := newService(store{}, Options{MaxHashing: 1}, slog.New(slog.DiscardHandler))
	s.slots <- struct{}{}
	_, _, err := s.login(context.Background(), "root", "password-1")
	if !errors.Is(err, ErrBusy) || smshttp.KindOf(httpError(err)) != smshttp.KindTooMany {
		t.Fatalf("login with no slot free = %v, want ErrBusy as too_many", err)
	}
}
