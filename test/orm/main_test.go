package orm_test

import (
	"context"
	"fmt"
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
	if os.Getenv("SMS_ORM_TEST_CHILD") == "1" {
		opts, err := isolated.ChildOptionsFromEnv()
		if err == nil {
			err = isolated.ServeChild(context.Background(), os.Stdin, os.Stdout, opts)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "sandbox:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
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
