package controllers_test

import (
	"context"
	"strings"
	"testing"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/testinfra/testenv"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// In operator mode only the operator holds approve: the chat credential
// the operator hands people (status.chatTokenSecret) reads and chats, and
// a decision made with it is refused, so a human's decision reaches the
// kernel only through an Approval the webhook reviewed. Seen failing
// (the approval went through) with chatScopes set to every scope.
func TestChatCredentialCannotApprove(t *testing.T) {
	testenv.Need(t)
	ctx := context.Background()
	w := newWorld(t)
	tn := w.tenant("acme", smsv1.TenantJudge{})
	if tn.Status.ChatTokenSecret != "acme-kernel-chat" || tn.Status.AdminEndpoint == "" {
		t.Fatalf("status = %+v, want the chat secret and the admin endpoint", tn.Status)
	}
	chat := w.chatKernel("acme")
	m := adminv1.Manifest{ID: "agent.hello", Version: "1", Points: []string{"route"}}
	v, err := chat.Submit(ctx, adminv1.Plugin{Manifest: m, Code: routeCode}, "")
	if err != nil || v.Status != adminv1.StatusPending {
		t.Fatalf("submit with the chat credential = %+v, %v; want pending", v, err)
	}
	if _, err := chat.State(ctx); err != nil {
		t.Fatalf("read the state with the chat credential: %v", err)
	}
	_, err = chat.Approve(ctx, v.ApprovalID, "mallory", v.CodeHash)
	if err == nil || !strings.Contains(err.Error(), "lacks the approve scope") {
		t.Fatalf("approve with the chat credential: %v, want a refusal for lack of the approve scope", err)
	}
	if _, err := chat.Disable(ctx, "agent.hello"); err == nil || !strings.Contains(err.Error(), "lacks the admin scope") {
		t.Fatalf("disable with the chat credential: %v, want a refusal for lack of the admin scope", err)
	}
}
