package kernelcmd

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// hello is an application plugin serving GET /hello.
func hello() kernel.Plugin {
	route := smshttp.Route{Method: http.MethodGet, Path: "/hello", Public: func(*smshttp.Request) bool { return true },
		Handler: func(context.Context, *smshttp.Request) (*smshttp.Response, error) {
			return smshttp.JSON(map[string]string{"hello": "world"}), nil
		}}
	return kernel.Plugin{Manifest: kernel.Manifest{ID: "app.hello", Version: "1", Inject: []string{smshttp.Key},
		Contributes: map[string][]any{smshttp.RoutePoint: {route}}}}
}

// An App's kernel holds the application's plugins besides the baseline's,
// serving their routes. Seen failing with start leaving Plugins out of
// baseline.Options (GET /hello 404).
func TestAppInstallsItsPlugins(t *testing.T) {
	b, err := App{Plugins: []kernel.Plugin{hello()}}.Start(context.Background(), gojaConfig(t, t.TempDir()), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	if status, body := send(t, srv, request{method: "GET", path: "/hello"}); status != 200 || body["hello"] != "world" {
		t.Errorf("GET /hello = %d %v, want the application's answer", status, body)
	}
	if _, ok := b.Kernel.Fiber("app.hello"); !ok {
		t.Error("the application's plugin is not in the kernel")
	}
}

// The binary an App makes has the subcommands the operator runs: kernel,
// with the flags of manager kernel, and sandbox for the isolated executor.
func TestAppCommand(t *testing.T) {
	cmd := App{Name: "erp-kernel"}.Command()
	var names []string
	for _, c := range cmd.Commands() {
		names = append(names, c.Name())
	}
	if !slices.Contains(names, "kernel") || !slices.Contains(names, "sandbox") || cmd.Name() != "erp-kernel" {
		t.Fatalf("%s has subcommands %v; want kernel and sandbox", cmd.Name(), names)
	}
	k, _, err := cmd.Find([]string{"kernel"})
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"listen", "admin-listen", "store", "executor", "model", "users", "token-auth-file"} {
		if k.Flags().Lookup(flag) == nil {
			t.Errorf("kernel has no --%s", flag)
		}
	}
}
