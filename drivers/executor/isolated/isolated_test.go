package isolated_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/sms-baseline/sms/drivers/executor/executortest"
	"github.com/sms-baseline/sms/drivers/executor/goja"
	"github.com/sms-baseline/sms/drivers/executor/isolated"
	"github.com/sms-baseline/sms/kernel"
)

// childEnv makes this test binary act as the sandbox child (see TestMain).
const childEnv = "SMS_ISOLATED_TEST_CHILD=1"

// muteEnv makes the child start and never read or answer.
const muteEnv = "SMS_ISOLATED_TEST_MUTE"

func TestMain(m *testing.M) {
	if os.Getenv("SMS_ISOLATED_TEST_CHILD") == "1" {
		if os.Getenv(muteEnv) == "1" {
			time.Sleep(time.Hour) // a child that never answers: the parent's deadlines end it
			os.Exit(1)
		}
		os.Exit(serveChild())
	}
	os.Exit(m.Run())
}

func serveChild() int {
	opts, err := isolated.ChildOptionsFromEnv()
	if err == nil {
		err = isolated.ServeChild(context.Background(), os.Stdin, os.Stdout, opts)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		return 1
	}
	return 0
}

func newExecutor(t testing.TB, opts isolated.Options) *isolated.Executor {
	t.Helper()
	opts.Command = []string{os.Args[0]}
	opts.Env = append(opts.Env, childEnv)
	exec, err := isolated.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return exec
}

func factory(t testing.TB, cfg executortest.Config) kernel.Executor {
	return newExecutor(t, isolated.Options{Runtime: goja.Options{Deadline: cfg.Deadline, MaxCallStackSize: cfg.MaxCallStackSize}})
}

// The shared conformance suite.
func TestConformance(t *testing.T) { executortest.Run(t, factory) }

func BenchmarkToolCall(b *testing.B) {
	executortest.BenchToolCall(b, newExecutor(b, isolated.Options{}))
}

func BenchmarkMount(b *testing.B) { executortest.BenchMount(b, newExecutor(b, isolated.Options{})) }
