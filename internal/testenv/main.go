package testenv

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/sms-baseline/sms/internal/envtestbin"
)

// Main runs a test package's tests against one shared Env, stored in
// *env, and exits: use it as TestMain's body. Without the binaries the
// package's tests are skipped with a message, or fail under make test
// (SMS_REQUIRE_ENVTEST=1).
func Main(m *testing.M, opts Options, env **Env) {
	e, err := Start(opts)
	if err != nil {
		if errors.Is(err, envtestbin.ErrNoAssets) && !Required() {
			fmt.Fprintln(os.Stderr, "skipping the envtest suite:", err)
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "envtest:", err)
		os.Exit(1)
	}
	*env = e
	if opts.Ready != nil {
		if err := opts.Ready(e); err != nil {
			fmt.Fprintln(os.Stderr, "envtest:", err)
			_ = e.Stop()
			os.Exit(1)
		}
	}
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop envtest:", err)
	}
	os.Exit(code)
}
