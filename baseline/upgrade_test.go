package baseline_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/baseline/baselinetest"
)

// A plugin's new version may serve the routes its old version serves: the
// load gate and the route point let a plugin take over its own routes, and
// the new code answers once it mounts. Seen failing with the route point's
// conflict check ignoring who contributes ("GET /hi is already served by
// plugin agent.hello" at the load gate).
func TestNewVersionTakesOverItsRoutes(t *testing.T) {
	env := baselinetest.New(t, baselinetest.Options{})
	for _, answer := range []string{"one", "two"} {
		code := `export default async function activate(cap) {
  await cap.contribute('route', { method: 'GET', path: '/hi', handler: async () => ({ body: '` + answer + `' }) })
}`
		r := env.Call("/api/plugins", map[string]any{"manifest": map[string]any{"id": "agent.hello", "version": answer, "points": []string{"route"}}, "code": code})
		if !strings.Contains(string(r.Body), `"mounted"`) {
			t.Fatalf("version %s: %d %s, want mounted", answer, r.Status, string(r.Body))
		}
		if got := env.Call("/hi", nil); got.Status != http.StatusOK || !strings.Contains(string(got.Body), answer) {
			t.Fatalf("GET /hi after version %s = %d %s", answer, got.Status, string(got.Body))
		}
	}
	other := `export default async function activate(cap) {
  await cap.contribute('route', { method: 'GET', path: '/hi', handler: async () => ({ body: 'other' }) })
}`
	r := env.Call("/api/plugins", map[string]any{"manifest": map[string]any{"id": "agent.other", "version": "1", "points": []string{"route"}}, "code": other})
	if !strings.Contains(string(r.Body), "already served by plugin agent.hello") {
		t.Fatalf("another plugin's route = %s, want a rejection naming agent.hello", string(r.Body))
	}
}
