package console

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sms-baseline/sms/baseline"
	"github.com/sms-baseline/sms/baseline/baselinetest"
	"github.com/sms-baseline/sms/baseline/budget"
	"github.com/sms-baseline/sms/contracts"
)

// TestConsoleShowsBudgetHalt: a turn the tenant's budget stops shows the
// reason in the transcript, apart from the reply. Here the user's one
// token goes in the first model call, and the turn stops before the tool
// call it asked for. Seen failing with the page ignoring halted events.
func TestConsoleShowsBudgetHalt(t *testing.T) {
	turns := [][]contracts.Block{{{Type: contracts.BlockText, Text: "Let me look."}, toolUse("plugin_list", map[string]any{})}}
	e := baselinetest.New(t, baselinetest.Options{AdminToken: "console-token", Turns: turns, Services: []string{baseline.ServiceConsole},
		Budget: budget.Config{Limits: contracts.BudgetLimits{User: contracts.Usage{Tokens: 1}}}})
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	b := newBrowser(t)
	b.run("use the token", chromedp.Navigate(srv.URL+"/console"), chromedp.WaitVisible(css(`#token input`)),
		chromedp.SendKeys(css(`#token input`), "console-token"), chromedp.Click(css(`#token button`)),
		chromedp.WaitVisible(css(`#ask textarea`)))
	b.ask("what runs here?", "the turn stopped:")
	got := b.text(`#transcript .halted`)
	if !strings.Contains(got, "user:admin used") || !strings.Contains(got, "model tokens") {
		t.Fatalf("the halt says %q, want the user and the limit", got)
	}
	b.screenshot("budget-halt")
}
