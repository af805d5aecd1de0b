package agentloop

import (
	"os"
	"testing"

	"github.com/sms-baseline/sms/drivers/executor/isolated"
	"github.com/sms-baseline/sms/internal/testinfra/executors"
)

// childVar makes this test binary act as the isolated executor's sandbox
// child, so the scenarios run on the production executor too.
const childVar = "SMS_AGENTLOOP_TEST_CHILD"

func TestMain(m *testing.M) {
	isolated.ServeChildIf(childVar)
	os.Exit(m.Run())
}

// cases are the executors the scenarios run on: goja in process, and the
// isolated child the kernel server uses in production.
var cases = executors.All(childVar)
