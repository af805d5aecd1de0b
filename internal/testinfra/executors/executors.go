package executors

import (
	"os"
	"testing"

	"github.com/sms-baseline/sms/drivers/executor/goja"
	"github.com/sms-baseline/sms/drivers/executor/isolated"
	"github.com/sms-baseline/sms/kernel"
)

// Case is one executor a scenario runs on.
type Case struct {
	// Name is goja or isolated, for subtest names.
	Name string
	// New builds the executor with the runtime's options (a deadline,
	// say); the isolated one runs them in its child.
	New func(t *testing.T, runtime goja.Options) kernel.Executor
}

// All returns goja and isolated. childVar is the environment variable
// that makes the test binary serve as the sandbox child: the one its
// TestMain passes to isolated.ServeChildIf.
func All(childVar string) []Case {
	return []Case{
		{Name: "goja", New: func(_ *testing.T, runtime goja.Options) kernel.Executor { return goja.New(runtime) }},
		{Name: "isolated", New: func(t *testing.T, runtime goja.Options) kernel.Executor {
			exec, err := isolated.New(isolated.Options{Command: []string{os.Args[0]}, Env: []string{childVar + "=1"},
				Runtime: runtime})
			if err != nil {
				t.Fatal(err)
			}
			return exec
		}},
	}
}

// Plain builds the executor with the runtime's defaults.
func (c Case) Plain(t *testing.T) kernel.Executor { return c.New(t, goja.Options{}) }
