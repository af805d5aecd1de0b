package agentcli_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/model/agentcli"
)

type nopSink struct{}

func (nopSink) Text(string)     {}
func (nopSink) Thinking(string) {}
func (nopSink) ToolCall(context.Context, string, json.RawMessage) (contracts.ToolOutcome, error) {
	return contracts.ToolOutcome{Content: "ok"}, nil
}

// Only a request with the server's bearer token reaches the MCP server;
// a tool whose schema the SDK would refuse is still served. Seen failing
// with authorized passing every request, and with addTool handing the
// SDK the tool's own schema (it panicked).
func TestToolServerNeedsItsToken(t *testing.T) {
	tools := []contracts.Tool{
		{Name: "ok", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "odd", InputSchema: json.RawMessage(`{"type":"string"}`)},
	}
	s, err := agentcli.Serve(tools, nopSink{}, agentcli.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, c := range []struct {
		auth string
		want int
	}{{"", http.StatusUnauthorized}, {"Bearer wrong", http.StatusUnauthorized}, {"Bearer " + s.Token, http.StatusOK}} {
		req, _ := http.NewRequest(http.MethodPost, s.URL, strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		if res.StatusCode != c.want {
			t.Errorf("Authorization %q: status %d, want %d", c.auth, res.StatusCode, c.want)
		}
	}
}
