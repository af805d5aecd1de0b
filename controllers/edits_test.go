package controllers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/controllers"
	"github.com/sms-baseline/sms/internal/testinfra/testenv"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// editAs patches the Plugin's spec as c.
func (w *world) editAs(c client.Client, name string, change func(*smsv1.Plugin)) {
	w.t.Helper()
	var p smsv1.Plugin
	w.must(c.Get(context.Background(), w.key(name), &p))
	patch := client.MergeFrom(p.DeepCopy())
	change(&p)
	w.must(c.Patch(context.Background(), &p, patch))
}

// A person who reverts an agent-made Plugin to the version the kernel
// runs, while the agent's newer version waits for a human, wins: the
// kernel drops the waiting version, and the mirror does not write it back
// over the revert. Seen failing with the judge answering a resubmission of
// the mounted code without superseding what waits: version 2 kept waiting
// in the kernel, and the mirror wrote it back over the revert.
func TestPersonRevertsWaitingAgentChange(t *testing.T) {
	testenv.Need(t)
	w := newWorld(t)
	w.tenant("acme", smsv1.TenantJudge{})
	alice := w.user("alice", false)
	ctx := context.Background()
	kc := w.kernel("acme")
	_, err := kc.Submit(ctx, adminv1.Plugin{Manifest: adminv1.Manifest{ID: "agent.notes", Version: "1"}, Code: notesCode("1")}, "agent")
	w.must(err)
	const name = "acme-agent-notes"
	w.waitPlugin(name, map[string]bool{smsv1.ConditionReady: true})
	_, err = kc.Submit(ctx, adminv1.Plugin{Manifest: adminv1.Manifest{ID: "agent.notes", Version: "2", Points: []string{"route"}}, Code: routeCode}, "agent")
	w.must(err)
	w.waitSpec(name, "version 2 waits", func(p *smsv1.Plugin) bool { return p.Spec.Version == "2" && p.Status.ApprovalRef != nil })

	w.editAs(alice, name, func(p *smsv1.Plugin) {
		code := notesCode("1")
		p.Spec.Version, p.Spec.Code, p.Spec.Points = "1", &code, nil
	})
	w.eventually("the kernel dropped version 2", func() error {
		s, err := kc.PluginStatus(ctx, "agent.notes")
		if err != nil || len(s.Pending) != 0 {
			return fmt.Errorf("pending %+v, %w", s.Pending, err)
		}
		return nil
	})
	w.poke(name)
	w.fiberIs("acme", "agent.notes", "1", true)
	p := w.waitSpec(name, "alice's revert kept", func(p *smsv1.Plugin) bool { return p.Spec.Version == "1" })
	if e := p.Status.LastEdit; e == nil || e.By != "alice" || e.Result != smsv1.VerdictResult(adminv1.StatusMounted) {
		t.Errorf("status.lastEdit = %+v, want alice's edit, mounted", e)
	}
}

// A person's edit of an agent-made Plugin that the judge rejects leaves
// the spec showing what the kernel runs, and the status says why. Seen
// failing with status.lastEdit never written: the reason was only in an
// Event.
func TestRejectedEditShowsWhy(t *testing.T) {
	testenv.Need(t)
	w := newWorld(t)
	w.tenant("acme", smsv1.TenantJudge{})
	alice := w.user("alice", false)
	_, err := w.kernel("acme").Submit(context.Background(),
		adminv1.Plugin{Manifest: adminv1.Manifest{ID: "agent.notes", Version: "1"}, Code: notesCode("1")}, "agent")
	w.must(err)
	const name = "acme-agent-notes"
	w.waitPlugin(name, map[string]bool{smsv1.ConditionReady: true})
	w.waitSpec(name, "annotated by the mirror", func(p *smsv1.Plugin) bool { return p.Annotations[smsv1.AnnotationKernelSubmission] != "" })

	w.editAs(alice, name, func(p *smsv1.Plugin) { code := importCode; p.Spec.Code = &code; p.Spec.Version = "2" })
	p := w.waitSpec(name, "the rejected edit reverted, with its reason", func(p *smsv1.Plugin) bool {
		return p.Spec.Version == "1" && p.Status.LastEdit != nil
	})
	e := p.Status.LastEdit
	if e.By != "alice" || e.Result != smsv1.VerdictResult(adminv1.StatusRejected) || !strings.Contains(e.Message, "lint") {
		t.Errorf("status.lastEdit = %+v, want alice's edit rejected by the lint gate", e)
	}
	w.fiberIs("acme", "agent.notes", "1", true)
}

// submissions counts the plugin submissions made to one kernel.
type submissions struct {
	next http.RoundTripper
	host string
	mu   sync.Mutex
	n    int
}

func (s *submissions) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	if r.URL.Host == s.host && r.Method == http.MethodPost && r.URL.Path == "/api/plugins" {
		s.n++
	}
	s.mu.Unlock()
	return s.next.RoundTrip(r)
}

// watch starts counting the submissions to host.
func (s *submissions) watch(host string) {
	s.mu.Lock()
	s.host = host
	s.mu.Unlock()
}

// useTransport makes rt http.DefaultTransport, which the operator's kernel
// clients use, until the test ends. Call it before the operator starts:
// they read it on every request.
func useTransport(t *testing.T, rt http.RoundTripper) {
	prev := http.DefaultTransport
	http.DefaultTransport = rt
	t.Cleanup(func() { http.DefaultTransport = prev })
}

func (s *submissions) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// A submission the kernel refuses outright (here a body over its 1 MiB
// limit, a 413) stalls the Plugin with the kernel's words and is not sent
// again until the spec changes. Seen failing with every kernel error
// retried: the Plugin showed KernelUnreachable and the operator submitted
// the same spec again and again with backoff.
func TestKernelRefusalStalls(t *testing.T) {
	testenv.Need(t)
	counter := &submissions{next: http.DefaultTransport}
	useTransport(t, counter)
	w := newWorld(t)
	tenant := w.tenant("acme", smsv1.TenantJudge{})
	u, err := url.Parse(tenant.Status.AdminEndpoint)
	w.must(err)
	counter.watch(u.Host)

	big := "export default async function activate(cap) {}\n//" + strings.Repeat("x", 1<<20)
	w.plugin(w.admin, "big", "agent.big", big)
	p := w.waitPlugin("big", map[string]bool{smsv1.ConditionStalled: true, smsv1.ConditionReady: false})
	if c := meta.FindStatusCondition(p.Status.Conditions, smsv1.ConditionReady); c.Reason != smsv1.ReasonKernelRefused || !strings.Contains(c.Message, "413") {
		t.Fatalf("Ready = %s: %s, want %s naming the 413", c.Reason, c.Message, smsv1.ReasonKernelRefused)
	}
	before := counter.count()
	for i := range 3 { // reconciles that are not spec changes
		w.editAs(w.admin, "big", func(p *smsv1.Plugin) { p.Labels = map[string]string{"poke": fmt.Sprint(i)} })
		time.Sleep(300 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // a retry with backoff would come within this
	if after := counter.count(); after != before {
		t.Fatalf("submissions of the refused spec: %d more after it stalled, want none", after-before)
	}
	w.editAs(w.admin, "big", func(p *smsv1.Plugin) { code := quietCode; p.Spec.Code = &code })
	w.waitPlugin("big", map[string]bool{smsv1.ConditionReady: true})
}

// kernelToken returns the tenant's admin token.
func (w *world) kernelToken(tenant string) string {
	w.t.Helper()
	var sec corev1.Secret
	w.must(w.admin.Get(context.Background(), w.key(controllers.AdminTokenSecretName(tenant)), &sec))
	return string(sec.Data[smsv1.SecretKeyToken])
}

// reinstaller reinstalls agent.notes just before the operator's first
// uninstall of it reaches the kernel: the agent defining the plugin again
// in the window between the kernel's uninstall and the operator's.
type reinstaller struct {
	next http.RoundTripper
	kc   *adminv1.Client // through next
	host string
	mu   sync.Mutex
	seen []string
}

func (r *reinstaller) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	hit := r.kc != nil && req.URL.Host == r.host && req.Method == http.MethodDelete && req.URL.Path == "/api/plugins/agent.notes"
	if hit {
		r.seen = append(r.seen, req.Method+" "+req.URL.Path)
	}
	first, kc := hit && len(r.seen) == 1, r.kc
	r.mu.Unlock()
	if hit {
		if first {
			plug := adminv1.Plugin{Manifest: adminv1.Manifest{ID: "agent.notes", Version: "2"}, Code: notesCode("2")}
			if _, err := kc.Submit(req.Context(), plug, "agent"); err != nil {
				return nil, err
			}
		}
	}
	return r.next.RoundTrip(req)
}

// The mirror removes the Plugin of an agent plugin the kernel uninstalled
// without uninstalling anything itself: the plugin is gone already, and an
// uninstall by id would remove whatever the agent installed under that id
// since. Seen failing with the Plugin deleted while it still had its
// uninstall finalizer: the finalizer's DELETE reached the kernel and took
// the agent's new install with it.
func TestUninstalledAgentPluginLeavesReinstallAlone(t *testing.T) {
	testenv.Need(t)
	hook := &reinstaller{next: http.DefaultTransport}
	useTransport(t, hook)
	w := newWorld(t)
	tenant := w.tenant("acme", smsv1.TenantJudge{})
	ctx := context.Background()
	kc := w.kernel("acme")
	_, err := kc.Submit(ctx, adminv1.Plugin{Manifest: adminv1.Manifest{ID: "agent.notes", Version: "1"}, Code: notesCode("1")}, "agent")
	w.must(err)
	const name = "acme-agent-notes"
	w.waitPlugin(name, map[string]bool{smsv1.ConditionReady: true})
	w.waitSpec(name, "installed, as the mirror says", func(p *smsv1.Plugin) bool {
		return p.Annotations[smsv1.AnnotationKernelInstalled] == "true"
	})

	u, err := url.Parse(tenant.Status.AdminEndpoint)
	w.must(err)
	direct := adminv1.New(tenant.Status.AdminEndpoint, w.kernelToken("acme"), &http.Client{Transport: hook.next})
	w.must(direct.Uninstall(ctx, "agent.notes"))
	hook.mu.Lock() // armed: the operator's next DELETE of agent.notes reinstalls it first
	hook.host, hook.kc = u.Host, direct
	hook.mu.Unlock()

	w.eventually("the Plugin of the uninstalled plugin removed", func() error {
		var p smsv1.Plugin
		if err := w.admin.Get(ctx, w.key(name), &p); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%w)", err)
		}
		return nil
	})
	hook.mu.Lock()
	seen := hook.seen
	hook.mu.Unlock()
	if len(seen) > 0 {
		t.Errorf("the operator uninstalled a plugin the kernel no longer had: %v", seen)
	}
	if _, err := direct.Submit(ctx, adminv1.Plugin{Manifest: adminv1.Manifest{ID: "agent.notes", Version: "2"}, Code: notesCode("2")}, "agent"); err != nil {
		t.Fatal(err)
	}
	w.waitSpec(name, "the new install mirrored", func(p *smsv1.Plugin) bool { return p.Spec.Version == "2" })
	w.fiberIs("acme", "agent.notes", "2", true)
}
