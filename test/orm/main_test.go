package orm_test

import (
	"os"
	"testing"

	"github.com/sms-baseline/sms/drivers/executor/goja"
	"github.com/sms-baseline/sms/drivers/executor/isolated"
	"github.com/sms-baseline/sms/kernel"
)

// childEnv makes this test binary act as the isolated executor's sandbox
// child, so the scenario runs on the production executor too.
const childEnv = "SMS_ORM_TEST_CHILD=1"

func TestMain(m *testing.M) {
	isolated.ServeChildIf("SMS_ORM_TEST_CHILD")
	os.Exit(m.Run())
}

// executors are the executors the scenario runs on: goja in process, and
// the isolated child the kernel server uses in production.
var executors = []struct {
	name string
	make func(t *testing.T) kernel.Executor
}{
	{"goja", func(*testing.T) kernel.Executor { return goja.New(goja.Options{}) }},
	{"isolated", func(t *testing.T) kernel.Executor {
		exec, err := isolated.New(isolated.Options{Command: []string{os.Args[0]}, Env: []string{childEnv}})
		if err != nil {
			t.Fatal(err)
		}
		return exec
	}},
}
