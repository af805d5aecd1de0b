package claudecli

import (
	"os"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/model/agentcli"
)

// The MCP server's token never appears on the CLI's command line, which
// every user of the machine can read: it is in a file only this user
// reads. Seen failing with the configuration passed inline.
func TestTokenStaysOffTheCommandLine(t *testing.T) {
	tools := &agentcli.ToolServer{URL: "http://127.0.0.1:1/mcp", Token: "secret-token"}
	dir := t.TempDir()
	ws := &agentcli.Workspace{Tools: tools, Dir: dir}
	config, err := writeMCPConfig(ws)
	if err != nil {
		t.Fatal(err)
	}
	args := (&backend{}).args(contracts.SessionTurn{System: "s"}, "system.txt", config)
	if joined := strings.Join(args, " "); strings.Contains(joined, "secret-token") {
		t.Fatalf("args %q carry the token", joined)
	}
	info, err := os.Stat(config)
	raw, _ := os.ReadFile(config)
	if err != nil || info.Mode().Perm() != 0o600 || !strings.Contains(string(raw), "secret-token") {
		t.Fatalf("config file mode %v, content %s; want 0600 holding the token", info.Mode().Perm(), raw)
	}
}
