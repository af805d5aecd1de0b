package agentloop

import (
	"net/http"
	"strings"
	"testing"
)

// A plugin an admin disabled stays disabled when it is defined anew: the
// admin's own agent defines version 2 after the admin's disable over REST,
// the verdict is mounted but says the plugin stays disabled, the fiber is
// version 2, disabled and held, and the admin's POST .../enable brings it
// up, no longer held.
// Seen failing without the hold checked in kernel.Propose: the verdict
// said only mounted, and version 2 ran enabled.
func TestDefineAfterAnAdminsDisableStaysDisabled(t *testing.T) {
	v2 := defineDoubler()
	v2[0].Input = []byte(strings.Replace(string(v2[0].Input), `"version":"1"`, `"version":"2"`, 1))
	b := scopedKernel(t, cases[0].Plain, defineDoubler(), text("defined"), v2, text("defined again"))
	admin := caller{b, "admin-token"}
	if res, isErr := step(t, b, "admin-token", "define it"); isErr || !strings.Contains(res, `"mounted"`) {
		t.Fatalf("plugin_define = %s, want mounted", res)
	}
	if status, body := admin.do(t, "POST /api/plugins/agent.doubler/disable", nil); status != http.StatusOK {
		t.Fatalf("the admin's disable = %d %s", status, body)
	}
	if res, isErr := step(t, b, "admin-token", "define it again"); isErr || !strings.Contains(res, "disabled by an admin") {
		t.Fatalf("plugin_define of version 2 = %s, want mounted, saying it stays disabled", res)
	}
	if v, _ := b.Kernel.Fiber("agent.doubler"); v.Version != "2" || v.Enabled || !v.Held {
		t.Fatalf("after the new definition the plugin is %+v, want version 2 disabled and held", v)
	}
	status, body := admin.do(t, "POST /api/plugins/agent.doubler/enable", nil)
	if status != http.StatusOK || !strings.Contains(body, `"state":"active"`) || strings.Contains(body, `"held":true`) {
		t.Fatalf("the admin's enable = %d %s, want active and not held", status, body)
	}
}
