package console

import (
	"strings"
	"testing"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/plugins/adminapi"
)

// markup would run script if the page ever put it in as HTML.
const markup = `<img src=x onerror="window.pwned='img'"><script>window.pwned='script'</script><b>bold</b>`

// TestAgentTextIsText: a plugin id, a rejection reason, a description,
// code and the agent's reply that hold markup and script show as text:
// nothing runs and no element is made from them. Seen failing with the
// reply appended through innerHTML: before the policy required Trusted
// Types it kept the script from running, but img and b elements
// appeared; since, the assignment throws and the reply never shows.
func TestAgentTextIsText(t *testing.T) {
	turns := [][]contracts.Block{
		{{Type: contracts.BlockText, Text: "Here: " + markup}, define("agent."+markup, "tool", doublerCode, markup)},
		{define("agent.shown", "route", "// "+markup+"\n"+helloCode, markup)},
		{{Type: contracts.BlockText, Text: "done " + markup}},
	}
	_, base := serve(t, turns, adminapi.Options{})
	b := newBrowser(t)
	b.login(base, rootLogin, rootPassword)
	b.ask("show me markup", "done ")
	b.waitText(`#transcript .verdict.rejected`, "<script>")
	b.tab("approvals")
	b.waitText(`#approval-list .card`, "<script>window.pwned='script'</script>")
	b.tab("events")
	b.waitText(`#event-list`, "agent.shown")
	b.tab("chat")
	b.screenshot("markup-as-text")
	if pwned := b.eval(`String(window.pwned)`); pwned != "undefined" {
		t.Fatalf("agent text ran script: window.pwned = %s", pwned)
	}
	if made := b.count(`main img, main b, main script`); made != 0 {
		t.Fatalf("agent text made %d elements", made)
	}
	if got := b.text(`#transcript li.agent`); !strings.Contains(got, markup) {
		t.Fatalf("the reply is not shown as its text: %q", got)
	}
}
