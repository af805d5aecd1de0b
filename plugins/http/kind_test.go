package http_test

import (
	"net/http"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// A kernel error answers with the status its code means: a call over
// budget is a 429 naming the limit, a capability the plugin lacks a 403.
// Seen failing with CodeBudget and CodeCapability missing from KindOf
// (both answered 500).
func TestKernelCodesAnswerTheirStatus(t *testing.T) {
	for code, want := range map[kernel.Code]int{
		kernel.CodeBudget:     http.StatusTooManyRequests,
		kernel.CodeCapability: http.StatusForbidden,
	} {
		err := &kernel.Error{Code: code, Message: "m"}
		if got := smshttp.KindOf(err).Status(); got != want {
			t.Errorf("%s: status %d, want %d", code, got, want)
		}
	}
}
