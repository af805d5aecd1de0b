package cluster

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A rotated model key Secret reaches the running kernel: the operator
// rolls the kernel pod, and the kernel's next call to the model carries
// the new key. The model is a stand-in for the provider's API that only
// records the key it is sent and refuses the call, listening inside the
// cluster's network namespace (the only network a kernel pod can reach).
func TestRotatedModelKeyReachesTheKernel(t *testing.T) {
	need(t)
	ns := namespace(t)
	keys := &keyRecorder{}
	addr := listenInCluster(t, keys)
	k(t, ns, "create", "secret", "generic", "model-key", "--from-literal=key=key-one")
	k(t, ns, "label", "secret", "model-key", "sms.dev/tenant=demo")
	applyJSON(t, ns, fmt.Sprintf(`{"apiVersion":"sms.dev/v1","kind":"Tenant","metadata":{"name":"demo"},
		"spec":{"model":{"provider":"openaicompat","name":"stand-in","baseURL":"http://%s/v1",
		"keySecretRef":{"name":"model-key","key":"key"}}}}`, addr))
	k(t, ns, "wait", "--for=condition=Ready", "tenant/demo", "--timeout=300s")
	keys.await(t, ns, "Bearer key-one")

	k(t, ns, "patch", "secret", "model-key", "-p", `{"stringData":{"key":"key-two"}}`)
	keys.await(t, ns, "Bearer key-two")
}

// keyRecorder answers every request 401 and keeps its Authorization.
type keyRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (r *keyRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.seen = append(r.seen, req.Header.Get("Authorization"))
	r.mu.Unlock()
	http.Error(w, `{"error":{"message":"stand-in model: no completions here","type":"invalid_request_error"}}`, http.StatusUnauthorized)
}

func (r *keyRecorder) has(want string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.seen {
		if s == want {
			return true
		}
	}
	return false
}

// await chats with the tenant until the model has been sent want (the
// kernel pod may still be rolling to the new key).
func (r *keyRecorder) await(t *testing.T, ns, want string) {
	t.Helper()
	eventually(t, "the model sent "+want, 3*time.Minute, func() error {
		out, _ := sms(t, ns, "chat", "demo", "hello")
		if !r.has(want) {
			r.mu.Lock()
			defer r.mu.Unlock()
			return fmt.Errorf("the model saw %q; chat said %s", r.seen, strings.TrimSpace(out))
		}
		return nil
	})
}

// listenInCluster serves h on the node's address inside the cluster's
// network namespace and returns the address. The socket is made on a
// thread moved into that namespace; the thread is never given back to the
// runtime, so no other goroutine runs in the namespace.
func listenInCluster(t *testing.T, h http.Handler) string {
	t.Helper()
	type result struct {
		l   net.Listener
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // not unlocked: the thread ends with this goroutine
		f, err := os.Open("/run/netns/" + os.Getenv("SMS_REALK8S_NETNS"))
		if err != nil {
			ch <- result{err: err}
			return
		}
		defer func() { _ = f.Close() }()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{err: fmt.Errorf("setns: %w", err)}
			return
		}
		l, err := net.Listen("tcp", os.Getenv("SMS_REALK8S_NODE_IP")+":0")
		ch <- result{l, err}
	}()
	res := <-ch
	if res.err != nil {
		t.Fatalf("listen inside the cluster's network namespace: %v", res.err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(res.l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return res.l.Addr().String()
}
