package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sms-baseline/sms/internal/testinfra/argohealth"
)

// bombCode asks for a gigabyte at once, twice the sandbox child's memory
// limit.
const bombCode = `export default async function activate(cap) {
  const hoard = 'x'.repeat(2 ** 30)
  cap.log(String(hoard.length))
}`

// tenant applies the sample tenant (scripted model) and the three sample
// plugins in ns, and waits for the tenant to be Ready.
func tenant(t *testing.T, ns string) {
	t.Helper()
	k(t, ns, "apply", "-f", filepath.Join(root, "config/samples/sms_v1_tenant.yaml"))
	k(t, ns, "wait", "--for=condition=Ready", "tenant/demo", "--timeout=300s")
}

// A Tenant becomes a StatefulSet whose pod runs `manager kernel` as a
// non-root user on a read-only root filesystem, on a bound volume; the
// operator runs in-cluster as its ServiceAccount with the generated RBAC.
// Plugins reach mounted, pending and rejected; Argo CD's health checks
// read those real objects as Healthy, Progressing and Degraded.
func TestTenantKernelPodAndVerdicts(t *testing.T) {
	need(t)
	ns := namespace(t)
	tenant(t, ns)
	sa := k(t, "sms-system", "get", "deploy/sms-controller-manager", "-o", "jsonpath={.spec.template.spec.serviceAccountName}")
	if sa != "sms-controller-manager" {
		t.Errorf("the operator runs as service account %q, want sms-controller-manager", sa)
	}
	pod := k(t, ns, "get", "pod/demo-kernel-0", "-o",
		`jsonpath={.spec.containers[0].args[0]} {.spec.containers[0].securityContext.runAsNonRoot} {.spec.containers[0].securityContext.readOnlyRootFilesystem} {.status.phase}`)
	if pod != "kernel true true Running" {
		t.Errorf("kernel pod: args[0], runAsNonRoot, readOnlyRootFilesystem, phase = %q; want kernel true true Running", pod)
	}
	if pvc := k(t, ns, "get", "pvc/data-demo-kernel-0", "-o", "jsonpath={.status.phase}"); pvc != "Bound" {
		t.Errorf("the kernel's volume is %q, want Bound", pvc)
	}
	for _, f := range []string{"mounted", "pending", "rejected"} {
		k(t, ns, "apply", "-f", filepath.Join(root, "config/samples/sms_v1_plugin_"+f+".yaml"))
	}
	k(t, ns, "wait", "--for=condition=Ready", "plugin/greeting", "--timeout=120s")
	k(t, ns, "wait", "--for=jsonpath={.status.verdict.result}=pending", "plugin/hello", "--timeout=120s")
	k(t, ns, "wait", "--for=jsonpath={.status.verdict.result}=rejected", "plugin/reader", "--timeout=120s")
	for name, want := range map[string]string{"greeting": "Healthy", "hello": "Progressing", "reader": "Degraded"} {
		if got := health(t, ns, "plugin/"+name); got.Status != want {
			t.Errorf("Argo CD health of plugin %s = %+v, want %s", name, got, want)
		}
	}
}

// health runs Argo CD's health check on the live object.
func health(t *testing.T, ns, obj string) argohealth.Status {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(k(t, ns, "get", obj, "-o", "json"))); err != nil {
		t.Fatal(err)
	}
	st, err := argohealth.Check(u)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// A user without the approver role cannot approve with kubectl patch; one
// with it can, and the route answers through the tenant's Service. A
// plugin that asks for more memory than its sandbox child may have is
// killed by the child's limit, and one that loops forever by its deadline:
// both are rejected, and the kernel pod neither restarts nor stops serving.
// Deleting the kernel pod brings it back from the StatefulSet with the
// plugins restored from its volume.
func TestApprovalRouteBombAndRestart(t *testing.T) {
	need(t)
	ns := namespace(t)
	tenant(t, ns)
	for _, f := range []string{"mounted", "pending"} {
		k(t, ns, "apply", "-f", filepath.Join(root, "config/samples/sms_v1_plugin_"+f+".yaml"))
	}
	k(t, ns, "wait", "--for=jsonpath={.status.verdict.result}=pending", "plugin/hello", "--timeout=120s")
	approval := k(t, ns, "get", "plugin/hello", "-o", "jsonpath={.status.approvalRef.name}")
	k(t, ns, "create", "rolebinding", "bob", "--clusterrole=sms-approval-approver", "--user=bob")
	k(t, ns, "create", "rolebinding", "carol", "--clusterrole=sms-approval-editor-role", "--user=carol")
	decide := `{"spec":{"decision":"Approved"}}`
	out, err := kubectl("-n", ns, "--as=carol", "patch", "approval/"+approval, "--type=merge", "-p", decide)
	if err == nil || !strings.Contains(out, `"approve"`) {
		t.Fatalf("carol's approval: %v %s; want a refusal naming the approve verb", err, out)
	}
	k(t, ns, "--as=bob", "patch", "approval/"+approval, "--type=merge", "-p", decide)
	k(t, ns, "wait", "--for=condition=Ready", "plugin/hello", "--timeout=120s")
	route(t, ns, "/hello/ada", `"hello":"ada"`)

	bomb := fmt.Sprintf(`{"apiVersion":"sms.dev/v1","kind":"Plugin","metadata":{"name":"bomb"},
		"spec":{"tenantRef":{"name":"demo"},"id":"agent.bomb","version":"1","code":%q}}`, bombCode)
	applyJSON(t, ns, bomb)
	k(t, ns, "wait", "--for=jsonpath={.status.verdict.result}=rejected", "plugin/bomb", "--timeout=180s")
	if msg := k(t, ns, "get", "plugin/bomb", "-o", `jsonpath={.status.conditions[?(@.type=="Judged")].message}`); !strings.Contains(msg, "out of memory") {
		t.Errorf("the bomb was rejected with %q; want its child ended by the memory limit", msg)
	}
	spin := `{"apiVersion":"sms.dev/v1","kind":"Plugin","metadata":{"name":"spin"},
		"spec":{"tenantRef":{"name":"demo"},"id":"agent.spin","version":"1","code":"export default async function activate(cap) { for (;;) {} }"}}`
	applyJSON(t, ns, spin)
	k(t, ns, "wait", "--for=jsonpath={.status.verdict.result}=rejected", "plugin/spin", "--timeout=180s")
	if msg := k(t, ns, "get", "plugin/spin", "-o", `jsonpath={.status.conditions[?(@.type=="Judged")].message}`); !strings.Contains(msg, "did not finish within") {
		t.Errorf("the endless loop was rejected with %q; want its deadline", msg)
	}
	if restarts := k(t, ns, "get", "pod/demo-kernel-0", "-o", "jsonpath={.status.containerStatuses[0].restartCount}"); restarts != "0" {
		t.Errorf("the kernel container restarted %s times; the bomb should have killed only its child", restarts)
	}
	route(t, ns, "/hello/bo", `"hello":"bo"`)

	restartKernel(t, ns)
	for _, p := range []string{"greeting", "hello"} {
		k(t, ns, "wait", "--for=condition=Mounted", "plugin/"+p, "--timeout=120s")
	}
	route(t, ns, "/hello/again", `"hello":"again"`)
}

// route GETs path from the tenant's Service until the answer holds want.
func route(t *testing.T, ns, path, want string) {
	t.Helper()
	ip := k(t, ns, "get", "service/demo-kernel", "-o", "jsonpath={.spec.clusterIP}")
	eventually(t, "GET "+path, time.Minute, func() error {
		out, err := sh("hack/realk8s.sh", "run", "curl", "-sS", "--max-time", "5", "http://"+ip+":8787"+path)
		if err != nil || !strings.Contains(out, want) {
			return fmt.Errorf("%s %w", out, err)
		}
		return nil
	})
}

// applyJSON applies one object given as JSON.
func applyJSON(t *testing.T, ns, obj string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "obj.json")
	if err := os.WriteFile(f, []byte(obj), 0o644); err != nil {
		t.Fatal(err)
	}
	k(t, ns, "apply", "-f", f)
}

// kubectl sms chat reaches the kernel through a port forward, and the
// plugin the agent defines is mirrored as a Plugin object.
func TestChatThroughPortForward(t *testing.T) {
	need(t)
	ns := namespace(t)
	tenant(t, ns)
	out, err := sms(t, ns, "chat", "demo", "add a tool that doubles a number")
	if err != nil || !strings.Contains(out, "21 doubled is 42.") {
		t.Fatalf("kubectl sms chat: %v\n%s", err, out)
	}
	k(t, ns, "wait", "--for=create", "plugin/demo-agent-doubler", "--timeout=60s")
	k(t, ns, "wait", "--for=condition=Mounted", "plugin/demo-agent-doubler", "--timeout=60s")
	if origin := k(t, ns, "get", "plugin/demo-agent-doubler", "-o", "jsonpath={.status.origin}"); origin != "agent" {
		t.Errorf("the mirrored plugin's origin is %q, want agent", origin)
	}
}

// sms runs kubectl sms (built once per test) in namespace ns, inside the
// cluster's network namespace.
func sms(t *testing.T, ns string, args ...string) (string, error) {
	t.Helper()
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "kubectl-sms"), "./cmd/kubectl-sms")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build kubectl-sms: %v\n%s", err, out)
	}
	return sh("hack/realk8s.sh", append([]string{"run", "env", "PATH=" + bin + ":" + os.Getenv("PATH"),
		"kubectl", "sms", "-n", ns}, args...)...)
}

// Deleting the operator's pod while it judges a burst of plugins loses
// nothing and applies nothing twice: the Deployment's next pod takes the
// lease, every plugin becomes Ready, and the kernel's log holds exactly
// one installation of each. The guarantee itself (a submission recorded
// before it is sent, and recognised when sent again) has its failing-first
// test in the controllers' envtest suite; this shows it holds with a real
// pod deleted by a real kubelet.
func TestOperatorRestartMidFlow(t *testing.T) {
	need(t)
	ns := namespace(t)
	tenant(t, ns)
	const n = 6
	for i := range n {
		code := fmt.Sprintf("export default async function activate(cap) { cap.log('quiet %d') }", i)
		applyJSON(t, ns, fmt.Sprintf(`{"apiVersion":"sms.dev/v1","kind":"Plugin","metadata":{"name":"quiet%d"},
			"spec":{"tenantRef":{"name":"demo"},"id":"agent.quiet%d","version":"1","code":%q}}`, i, i, code))
	}
	k(t, "sms-system", "delete", "pod", "-l", "control-plane=controller-manager", "--wait=false")
	for i := range n {
		k(t, ns, "wait", "--for=condition=Ready", fmt.Sprintf("plugin/quiet%d", i), "--timeout=300s")
	}
	logs, err := sms(t, ns, "logs", "demo")
	if err != nil {
		t.Fatalf("kubectl sms logs: %v\n%s", err, logs)
	}
	installed := map[string]int{}
	for _, line := range strings.Split(logs, "\n") {
		if f := strings.Split(line, "\t"); len(f) >= 4 && f[2] == "plugin/installed" {
			installed[f[3]]++
		}
	}
	for i := range n {
		if id := fmt.Sprintf("agent.quiet%d", i); installed[id] != 1 {
			t.Errorf("%s was installed %d times; want once\n%s", id, installed[id], logs)
		}
	}
}

// restartKernel deletes the demo tenant's kernel pod and waits until the
// StatefulSet's new pod is ready and the tenant Ready again.
func restartKernel(t *testing.T, ns string) {
	t.Helper()
	uid := k(t, ns, "get", "pod/demo-kernel-0", "-o", "jsonpath={.metadata.uid}")
	k(t, ns, "delete", "pod/demo-kernel-0", "--wait=false")
	eventually(t, "a new kernel pod", 3*time.Minute, func() error {
		now, err := kubectl("-n", ns, "get", "pod/demo-kernel-0", "-o", "jsonpath={.metadata.uid} {.status.containerStatuses[0].ready}")
		if f := strings.Fields(now); err != nil || len(f) != 2 || f[0] == uid || f[1] != "true" {
			return fmt.Errorf("pod: %s %w", now, err)
		}
		return nil
	})
	k(t, ns, "wait", "--for=condition=Ready", "tenant/demo", "--timeout=180s")
}
