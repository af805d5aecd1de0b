package testenv

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/sms-baseline/sms/internal/testinfra/envtestbin"
)

// SkipVariable names the environment variable that, set to 1, turns a
// missing kube-apiserver and etcd into skipped tests instead of a failed
// suite.
const SkipVariable = "SMS_SKIP_ENVTEST"

// missing is why the binaries were not found, in a suite run with
// SMS_SKIP_ENVTEST=1; Need skips each test with it.
var missing error

// Main runs a test package's tests against one shared Env, stored in
// *env, and exits: use it as TestMain's body. Without the binaries the
// suite fails with a message naming hack/setup-envtest.sh, unless
// SMS_SKIP_ENVTEST=1 asks for skipping: then every test that calls Need
// reports itself skipped and the others run.
func Main(m *testing.M, opts Options, env **Env) {
	e, err := Start(opts)
	if err != nil {
		if errors.Is(err, envtestbin.ErrNoAssets) && Skipping() {
			missing = err
			os.Exit(m.Run())
		}
		fmt.Fprintf(os.Stderr, "envtest: %v\n(set %s=1 to skip the tests that need it instead)\n", err, SkipVariable)
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

// Need skips t when Main found no envtest binaries and skipping was asked
// for. Every test that uses the Env calls it first (its helpers do).
func Need(t testing.TB) {
	t.Helper()
	if missing != nil {
		t.Skipf("%s=1: %v", SkipVariable, missing)
	}
}

// Skipping reports whether tests that need envtest or kubectl skip when
// those are missing (SMS_SKIP_ENVTEST=1) rather than fail.
func Skipping() bool { return os.Getenv(SkipVariable) == "1" }
