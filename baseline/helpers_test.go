package baseline_test

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/baseline"
)

// server sends requests to a Baseline's handler.
type server struct {
	t *testing.T
	b *baseline.Baseline
}

// call sends a JSON request and returns the trimmed body.
func (s server) call(method, path string, body any) string {
	t, b := s.t, s.b
	t.Helper()
	var buf bytes.Buffer
	if body != nil {
		if err := json.NewEncoder(&buf).Encode(body); err != nil {
			t.Fatal(err)
		}
	}
	req := httptest.NewRequest(method, path, &buf)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	b.ServeHTTP(rec, req)
	return strings.TrimSpace(rec.Body.String())
}
