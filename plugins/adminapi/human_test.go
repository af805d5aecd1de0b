package adminapi_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/baseline/baselinetest"
	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/judge"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// humanTable returns the rows of the "What needs a human" table in
// docs/agent-plugins.md, each split into its cells.
func humanTable(t *testing.T) [][]string {
	t.Helper()
	raw, err := os.ReadFile("../../docs/agent-plugins.md")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(string(raw), "<!-- needs-a-human: begin -->")
	body, _, ok2 := strings.Cut(body, "<!-- needs-a-human: end -->")
	if !ok || !ok2 {
		t.Fatal("docs/agent-plugins.md has no needs-a-human table")
	}
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSpace(body), "\n")[2:] { // past the header and its rule
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 3 {
			t.Fatalf("row %q has %d cells, want action | who | how", line, len(cells))
		}
		rows = append(rows, cells)
	}
	return rows
}

var (
	routeRef = regexp.MustCompile("`(GET|POST|PUT|PATCH|DELETE) (/[^`?]+)`")
	scopeRef = regexp.MustCompile("`(read|chat|approve|admin)`")
	codeRef  = regexp.MustCompile("`([^`]+)`")
)

// The table of what needs a human says what the code does. Each admin API
// route a row names is served with the scope its "who" names; every route
// that changes plugins, approvals or transitions is in the table; the row
// of sensitive scopes and points lists the judge's defaults; the system
// capability named is contracts.SystemCapabilities; the annotation named
// is the operator's. Seen failing with the abort route's scope changed to
// approve in the code, and with the judge's default points given "tool".
func TestWhatNeedsAHuman(t *testing.T) {
	env := baselinetest.New(t, baselinetest.Options{AdminToken: "t"})
	v, err := env.Kernel.GetValue(smshttp.Key)
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]string{}
	for _, r := range v.(smshttp.Service).Routes() {
		served[r.Method+" "+r.Path] = string(r.Scope)
	}
	rows := humanTable(t)
	named := map[string]bool{}
	var text strings.Builder
	for _, row := range rows {
		text.WriteString(strings.Join(row, " ") + "\n")
		scopes := scopeRef.FindAllStringSubmatch(row[1], -1)
		for _, m := range routeRef.FindAllStringSubmatch(row[2], -1) {
			route := m[1] + " " + strings.ReplaceAll(m[2], "{id}", ":id")
			named[route] = true
			scope, ok := served[route]
			if !ok {
				t.Errorf("the table names %s, which the admin API does not serve", route)
				continue
			}
			if route == "POST /api/plugins" {
				continue // anyone with chat submits; the row is about what an admin's submission can do
			}
			if len(scopes) == 0 || scopes[0][1] != scope {
				t.Errorf("the table says %s needs %v; the admin API serves it with scope %q", route, scopes, scope)
			}
		}
	}
	for route, scope := range served {
		method, path, _ := strings.Cut(route, " ")
		changes := method != "GET" && (strings.HasPrefix(path, "/api/plugins") || strings.HasPrefix(path, "/api/approvals") ||
			strings.HasPrefix(path, "/api/transitions"))
		if changes && !named[route] {
			t.Errorf("%s (scope %s) changes plugins, approvals or transitions and is not in the table", route, scope)
		}
	}
	sensitive := codes(rows[0][0])
	want := append(slices.Clone(judge.DefaultSensitiveScopes), judge.DefaultSensitivePoints...)
	if !slices.Equal(sorted(sensitive), sorted(want)) {
		t.Errorf("the table's sensitive scopes and points are %v; the judge's defaults are %v", sensitive, want)
	}
	for _, c := range contracts.SystemCapabilities() {
		if !strings.Contains(text.String(), "`"+c+"`") {
			t.Errorf("system capability %s is not in the table", c)
		}
	}
	if !strings.Contains(text.String(), "`"+smsv1.AnnotationForceUninstall+"`") {
		t.Errorf("the force-uninstall annotation %s is not in the table", smsv1.AnnotationForceUninstall)
	}
}

func codes(s string) []string {
	var out []string
	for _, m := range codeRef.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
