package controllers_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/controllers"
	"github.com/sms-baseline/sms/internal/testinfra/testenv"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// TestDeclarationOf: a manifest's declaration lists every point (declared
// or with items), its scopes and keys, routes as "METHOD /path", jobs as
// "name every <interval>" and any other item as compact JSON; lists are
// sorted, so the order a manifest was written in, or its trip through
// JSON to the operator, never tells two declarations apart. Seen failing
// with normalDeclaration not sorting (inject kept the manifest's order)
// and with millis reading float64 only (the Go-built job fell into
// contributions).
func TestDeclarationOf(t *testing.T) {
	m := adminv1.Manifest{ID: "agent.hello", Version: "1", Points: []string{"tool", "route"}, Scopes: []string{"net"},
		Inject: []string{"db", "caller"}, Provide: []string{"greeter"},
		Contributes: map[string][]any{
			"route":      {map[string]any{"method": "get", "path": "/hello/:name", "handler": map[string]any{"$fn": 1}}},
			"schedule":   {map[string]any{"name": "digest", "everyMs": 86_400_000}},
			"collection": {map[string]any{"name": "notes", "public": true}},
		}}
	want := smsv1.Declaration{Points: []string{"collection", "route", "schedule", "tool"}, Scopes: []string{"net"},
		Inject: []string{"caller", "db"}, Provide: []string{"greeter"}, Routes: []string{"GET /hello/:name"},
		Schedules: []string{"digest every 24h0m0s"}, Contributions: []string{`collection: {"name":"notes","public":true}`}}
	if got := controllers.DeclarationOf(m); !equality.Semantic.DeepEqual(got, want) {
		t.Fatalf("DeclarationOf = %+v, want %+v", got, want)
	}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var wire adminv1.Manifest
	if err := json.Unmarshal(raw, &wire); err != nil {
		t.Fatal(err)
	}
	slices.Reverse(wire.Points)
	slices.Reverse(wire.Inject)
	if got := controllers.DeclarationOf(wire); !equality.Semantic.DeepEqual(got, want) {
		t.Fatalf("DeclarationOf after JSON and reordering = %+v, want %+v", got, want)
	}
	if got := controllers.DescribeDeclaration(smsv1.Declaration{}); got != "nothing" {
		t.Errorf("DescribeDeclaration of nothing = %q", got)
	}
}

// TestApprovalName: Approval names are DNS-1123 names led by the Plugin's
// name, one per request of a kernel approval id, whatever the plugin's
// name length or the id's form. Seen failing with a truncated plugin
// name's trailing "." kept (an invalid name).
func TestApprovalName(t *testing.T) {
	id := "agent.hello-0123456789abcdef0123456789abcdef"
	for _, tt := range []struct {
		plugin, id string
		n          int
		want       string
	}{
		{"hello", id, 0, "hello-0123456789"},
		{"hello", id, 1, "hello-0123456789-2"},
		{"hello", id, 9, "hello-0123456789-10"},
		{strings.Repeat("a", 229) + ".b.c", id, 0, ""},
		{"hello", "Not A Judge Id", 0, ""},
	} {
		got := controllers.ApprovalName(tt.plugin, tt.id, tt.n)
		if tt.want != "" && got != tt.want {
			t.Errorf("ApprovalName(%q, %q, %d) = %q, want %q", tt.plugin, tt.id, tt.n, got, tt.want)
		}
		if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 || !strings.HasPrefix(got, tt.plugin[:min(len(tt.plugin), 5)]) {
			t.Errorf("ApprovalName(%q, %q, %d) = %q: %v", tt.plugin, tt.id, tt.n, got, errs)
		}
	}
	if a, b := controllers.ApprovalName("p", id, 0), controllers.ApprovalName("p", "agent.other-"+strings.Repeat("f", 32), 0); a == b {
		t.Errorf("two kernel approvals share the name %q", a)
	}
}

// TestApprovalPrinterColumns: kubectl get approvals shows the points an
// Approval's declaration names, and -o wide its scopes and kernel
// approval id, as the API server renders them. Seen failing with the
// Points column left out of the CRD.
func TestApprovalPrinterColumns(t *testing.T) {
	testenv.Need(t)
	w := newWorld(t) // its operator serves the admission webhooks
	ctx := context.Background()
	a := &smsv1.Approval{ObjectMeta: metav1.ObjectMeta{Name: "columns", Namespace: w.ns},
		Spec: smsv1.ApprovalSpec{PluginRef: corev1.LocalObjectReference{Name: "hello"}, PluginID: "agent.hello",
			CodeHash: adminv1.HashCode([]byte(routeCode)), KernelApprovalID: "agent.hello-" + strings.Repeat("0", 32),
			Declaration: &smsv1.Declaration{Points: []string{"route", "schedule"}, Scopes: []string{"net"}}}}
	w.must(w.asOperator().Create(ctx, a)) // only the operator sets a kernel approval id
	hc, err := rest.HTTPClientFor(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(env.Config.Host, "/")+"/apis/sms.dev/v1/namespaces/"+w.ns+"/approvals/columns", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	var table metav1.Table
	if err == nil {
		err = json.Unmarshal(raw, &table)
	}
	if err != nil || len(table.Rows) != 1 {
		t.Fatalf("GET approval as a table: %s %s, %v; want one row", resp.Status, raw, err)
	}
	cells := map[string]any{}
	for i, c := range table.ColumnDefinitions {
		cells[c.Name] = table.Rows[0].Cells[i]
	}
	want := map[string]any{"Points": `["route","schedule"]`, "Scopes": `["net"]`, "Kernel-Approval": a.Spec.KernelApprovalID}
	for col, v := range want {
		if cells[col] != v {
			t.Errorf("column %s = %v, want %v (row %v)", col, cells[col], v, cells)
		}
	}
}
