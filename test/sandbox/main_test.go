package sandbox_test

import (
	"os"
	"testing"
	"time"

	"github.com/sms-baseline/sms/drivers/executor/goja"
	"github.com/sms-baseline/sms/drivers/executor/isolated"
	"github.com/sms-baseline/sms/kernel"
)

// childEnv makes this test binary act as the isolated executor's sandbox
// child, so the scenarios run on the production executor too.
const childEnv = "SMS_SANDBOX_TEST_CHILD=1"

func TestMain(m *testing.M) {
	isolated.ServeChildIf("SMS_SANDBOX_TEST_CHILD")
	os.Exit(m.Run())
}

// executors are the executors the scenarios run on, each with the given
// deadline per activation and call.
var executors = []struct {
	name string
	make func(t *testing.T, deadline time.Duration) kernel.Executor
}{
	{"goja", func(_ *testing.T, deadline time.Duration) kernel.Executor {
		return goja.New(goja.Options{Deadline: deadline})
	}},
	{"isolated", func(t *testing.T, deadline time.Duration) kernel.Executor {
		exec, err := isolated.New(isolated.Options{Command: []string{os.Args[0]}, Env: []string{childEnv},
			Runtime: goja.Options{Deadline: deadline}})
		if err != nil {
			t.Fatal(err)
		}
		return exec
	}},
}
