package baseline_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/baseline"
	"github.com/sms-baseline/sms/drivers/store/sqlite"
	"github.com/sms-baseline/sms/kernel"
)

func getRoute(path, answer string) string {
	return `export default async function activate(cap) {
  await cap.contribute('route', { method: 'GET', path: '` + path + `', handler: async () => ({ body: '` + answer + `' }) })
}`
}

// get answers the status of GET path and its body.
func get(b *baseline.Baseline, path string) (int, string) {
	rec := httptest.NewRecorder()
	b.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Body.String()
}

// forgeRoute writes a route plugin into the store's log and blobs the way
// a hand edit would: a plugin/installed and its code, with no judge decision
// and no commit.
func forgeRoute(t *testing.T, path string) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.OpenStore(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	code := getRoute("/evil", "forged")
	hash, err := st.Blobs().Put(ctx, []byte(code))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(map[string]any{"trust": "agent", "codeHash": hash,
		"manifest": kernel.Manifest{ID: "agent.evil", Version: "1", Points: []string{"route"}}})
	if _, err := st.Log().Append(ctx, kernel.Event{Type: kernel.EventPluginInstalled, Plugin: "agent.evil", Data: data}); err != nil {
		t.Fatal(err)
	}
}

// A plugin/installed written into the store by hand (no approval, no
// commit) does not bring its route up on restart, and the kernel reports
// it (the restore_refused taint in the state); a sensitive plugin a human
// approved is served again after the same restart.
// Seen failing without the fix: GET /evil answered 200 "forged".
func TestRestartServesNoForgedRoute(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "kernel.db")
	boot := func() *baseline.Baseline {
		st, err := sqlite.OpenStore(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := baseline.New(ctx, baseline.Options{Store: st})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b := boot()
	s := server{t, b}
	var v struct{ ApprovalID, CodeHash string }
	raw := s.call("POST", "/api/plugins", map[string]any{"manifest": map[string]any{"id": "agent.hello", "version": "1", "points": []string{"route"}},
		"code": getRoute("/hi", "hello")})
	if err := json.Unmarshal([]byte(raw), &v); err != nil || v.ApprovalID == "" {
		t.Fatalf("submit = %s, want pending", raw)
	}
	if got := s.call("POST", "/api/approvals/"+v.ApprovalID+"/approve", map[string]string{"codeHash": v.CodeHash, "by": "alice"}); !strings.Contains(got, `"mounted"`) {
		t.Fatalf("approve = %s, want mounted", got)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	forgeRoute(t, path)
	b = boot()
	defer func() { _ = b.Close() }()
	if status, body := get(b, "/evil"); status == http.StatusOK || strings.Contains(body, "forged") {
		t.Fatalf("GET /evil after the restart = %d %s, want it not served", status, body)
	}
	if status, body := get(b, "/hi"); status != http.StatusOK || !strings.Contains(body, "hello") {
		t.Fatalf("GET /hi after the restart = %d %s, want the approved route", status, body)
	}
	if state := (server{t, b}).call("GET", "/api/state", nil); !strings.Contains(state, "restore_refused") {
		t.Fatalf("state = %.300s, want the restore_refused taint", state)
	}
}
