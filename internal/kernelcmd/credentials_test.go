package kernelcmd

import (
	"strings"
	"testing"

	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// The token file reads kube-apiserver's static token format, and every
// mistake is refused with the line it is on, never half-read; names the
// kernel records on its own (admin, anonymous, chat-agent) are refused.
// Seen failing (a repeated token was accepted) with the seenToken check
// removed, and with reservedNames empty.
func TestParseTokenAuth(t *testing.T) {
	creds, err := ParseTokenAuth(strings.NewReader("# people\n\nt1,people,\"read,chat\"\nt2, bot, approve\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(creds) != 2 || creds[0].Name != "people" || len(creds[0].Scopes) != 2 || creds[1].Name != "bot" ||
		creds[1].Scopes[0] != smshttp.ScopeApprove {
		t.Fatalf("credentials = %+v", creds)
	}
	for _, c := range []struct{ in, want string }{
		{"t1,people\n", "want token,name"},
		{"t1,people,\"read,root\"\n", `line 1: credential people: unknown scope "root"`},
		{"t1,a,read\nt1,b,read\n", "line 2: the token of b is already used"},
		{"t1,a,read\nt2,a,read\n", `line 2: credential name "a" is used twice`},
		{",a,read\n", "line 1: the token is empty"},
		{"t1,a\tb,read\n", "line 1: the name must be"},
		{"t1,a,\"read,read\"\n", `scope "read" listed twice`},
		{"# nothing\n", "no credential"},
		{"t1,admin,read\n", `line 1: the name "admin" is the kernel's own`},
		{"t1,chat-agent,read\n", `the name "chat-agent" is the kernel's own`},
	} {
		if _, err := ParseTokenAuth(strings.NewReader(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseTokenAuth(%q) = %v, want an error containing %q", c.in, err, c.want)
		}
	}
}
