package cluster

import (
	"fmt"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Tenant on Postgres works as one on SQLite: its kernel pod reaches the
// throwaway server of hack/postgres.sh (started inside the cluster's
// network namespace on the node's address), mounts a plugin, and after its
// pod is deleted the new pod restores the plugin from the database.
func TestTenantOnPostgres(t *testing.T) {
	need(t)
	ns := namespace(t)
	url, local := postgres(t)
	k(t, ns, "create", "secret", "generic", "demo-db", "--from-literal=url="+url)
	tenant := `{"apiVersion":"sms.dev/v1","kind":"Tenant","metadata":{"name":"demo"},
		"spec":{"storage":{"driver":"postgres","postgres":{"urlSecretRef":{"name":"demo-db","key":"url"}}}}}`
	applyJSON(t, ns, tenant)
	k(t, ns, "wait", "--for=condition=Ready", "tenant/demo", "--timeout=300s")
	k(t, ns, "apply", "-f", filepath.Join(root, "config/samples/sms_v1_plugin_mounted.yaml"))
	k(t, ns, "wait", "--for=condition=Ready", "plugin/greeting", "--timeout=120s")
	if out, err := sh("psql", local, "-Atc",
		"select count(*) from information_schema.schemata where schema_name = 'tenant_demo'"); err != nil || strings.TrimSpace(out) != "1" {
		t.Fatalf("schema tenant_demo in the server: %q %v", out, err)
	}

	restartKernel(t, ns)
	k(t, ns, "wait", "--for=condition=Mounted", "plugin/greeting", "--timeout=120s")
	if pvcs := k(t, ns, "get", "pvc", "-o", "name"); pvcs != "" {
		t.Errorf("a tenant on Postgres has volumes: %s", pvcs)
	}
}

// postgres starts a throwaway server inside the cluster's network
// namespace, listening on the node's address and trusting the pod
// network, and returns the URL pods use and a connection string through
// its unix socket for the test itself; the server stops when the test
// ends.
func postgres(t *testing.T) (url, local string) {
	t.Helper()
	ip, pods := os.Getenv("SMS_REALK8S_NODE_IP"), os.Getenv("SMS_REALK8S_POD_NET")
	if ip == "" || pods == "" {
		t.Fatal("hack/realk8s.sh up exported no SMS_REALK8S_NODE_IP and SMS_REALK8S_POD_NET")
	}
	out, err := sh("hack/realk8s.sh", "run", "env", "PG_LISTEN="+ip, "PG_TRUST_NET="+pods, "hack/postgres.sh", "start")
	if err != nil {
		t.Fatalf("hack/postgres.sh start: %v\n%s", err, out)
	}
	var dir string
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "export SMS_TEST_POSTGRES_URL="); ok {
			url = v
		}
		if v, ok := strings.CutPrefix(line, "export SMS_POSTGRES_DIR="); ok {
			dir = v
		}
	}
	if url == "" || dir == "" {
		t.Fatalf("hack/postgres.sh start printed no URL and directory:\n%s", out)
	}
	t.Cleanup(func() { _, _ = sh("hack/postgres.sh", "stop", dir) })
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	return url, fmt.Sprintf("host=%s port=%s user=postgres dbname=postgres", dir, u.Port())
}
