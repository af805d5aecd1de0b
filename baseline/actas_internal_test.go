package baseline

import (
	"context"
	"testing"

	"github.com/sms-baseline/sms/plugins/auth"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// TestActAsAGonePlugin: work of a plugin that is no longer installed (an
// automation run racing its uninstall) acts for nobody, never for the
// writer whose context it carries. Seen failing with the writer's context
// returned for an unknown plugin.
func TestActAsAGonePlugin(t *testing.T) {
	b, err := New(context.Background(), Options{Auth: &auth.Options{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	writer := smshttp.WithPrincipal(context.Background(), smshttp.Principal{Authenticated: true, Name: "user:cleo", UserID: 2})
	if p := smshttp.PrincipalFrom(b.actAs(writer, "agent.gone")); p.Authenticated || p.UserID != 0 {
		t.Fatalf("a gone plugin acts for %+v", p)
	}
	if p := smshttp.PrincipalFrom(b.actAs(writer, "sms.orm")); p.UserID != 2 {
		t.Fatalf("a system plugin acts for %+v, want the writer", p)
	}
}
