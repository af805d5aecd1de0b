package adminv1_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// fake answers every request with status and body, as something that is
// not (or not only) a kernel would: a proxy, a wrong base URL, a kernel
// that is not ready.
func fake(t *testing.T, status int, body string) *adminv1.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return adminv1.New(srv.URL+"/", token, nil)
}

// A 404 that is not the kernel's own not_found (a proxy's page, a wrong
// base URL) is an error even for Uninstall: nothing says the plugin is
// gone. Seen failing with Uninstall tolerating every 404 (it returned nil).
func TestUninstallForeign404(t *testing.T) {
	c := fake(t, http.StatusNotFound, "404 page not found\n")
	err := c.Uninstall(context.Background(), "agent.noop")
	var e *adminv1.Error
	if !errors.As(err, &e) || e.Status != http.StatusNotFound || e.Message != "404 page not found" {
		t.Fatalf("Uninstall against a non-kernel 404: %v, want a 404 *Error with the page's text", err)
	}
}

// A kernel that is not ready is unhealthy, with its cause in the error.
// Seen failing with send() taking every status as success (Healthy
// returned nil).
func TestUnhealthy(t *testing.T) {
	c := fake(t, http.StatusServiceUnavailable, "not ready: store not open")
	err := c.Healthy(context.Background())
	var e *adminv1.Error
	if !errors.As(err, &e) || e.Status != http.StatusServiceUnavailable || !strings.Contains(err.Error(), "not ready: store not open") {
		t.Fatalf("Healthy: %v, want a 503 *Error naming the cause", err)
	}
}

// An answer over MaxAnswerBytes is an error, not read to the end or cut
// short. Seen failing with the limit check removed (State returned the
// kernel "x").
func TestAnswerTooLarge(t *testing.T) {
	body := `{"kernel":"x"` + strings.Repeat(" ", adminv1.MaxAnswerBytes) + `}`
	c := fake(t, http.StatusOK, body)
	if s, err := c.State(context.Background()); err == nil || !strings.Contains(err.Error(), "exceeds") {
		t.Fatalf("State of an oversized answer = %+v, %v; want an error saying it exceeds the limit", s, err)
	}
}
