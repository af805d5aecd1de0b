package webhook_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/testinfra/testenv"
)

// TestPluginRequestedBy follows one Plugin through the hands of alice and
// bob: sms.dev/requested-by names whoever last changed the spec, whatever
// the request sent.
//
// Seen failing with the stamp on create removed (plugin.go keeping the
// annotation a create sends): `create by alice: sms.dev/requested-by: got
// "mallory", want "alice"`. Seen failing with the restore on a
// spec-unchanged update removed (the request's user stamped on every
// update): `labels by bob: sms.dev/requested-by: got "bob", want "alice"`.
func TestPluginRequestedBy(t *testing.T) {
	testenv.Need(t)
	serve(t)
	ns := newNamespace(t, false)
	plugin := newPlugin(ns, "p", map[string]string{smsv1.AnnotationRequestedBy: "mallory"})
	steps := []struct {
		name   string
		user   string
		change func(*smsv1.Plugin)
		want   string
	}{
		{name: "create by alice", user: "alice", want: "alice"},
		{name: "labels by bob", user: "bob", want: "alice", change: func(p *smsv1.Plugin) {
			p.Labels = map[string]string{"team": "bob"}
			p.Annotations[smsv1.AnnotationRequestedBy] = "bob"
		}},
		{name: "annotation removed by bob", user: "bob", want: "alice", change: func(p *smsv1.Plugin) {
			delete(p.Annotations, smsv1.AnnotationRequestedBy)
		}},
		{name: "spec by bob", user: "bob", want: "bob", change: func(p *smsv1.Plugin) {
			p.Spec.Version = "1.0.1"
			p.Annotations[smsv1.AnnotationRequestedBy] = "mallory"
		}},
	}
	for _, step := range steps {
		c := as(t, step.user)
		if step.change == nil {
			must(t, c.Create(t.Context(), plugin))
		} else {
			must(t, update(t, c, plugin, step.change))
		}
		if got := plugin.Annotations[smsv1.AnnotationRequestedBy]; got != step.want {
			t.Errorf("%s: %s: got %q, want %q", step.name, smsv1.AnnotationRequestedBy, got, step.want)
		}
	}
}

// TestPluginRequestedByOperator checks that the operator, which mirrors
// plugins the agent defined, keeps the requester it names (from the
// kernel) on create and on spec changes.
//
// Seen failing with the operator's exemption removed (pluginMutator.Handle
// not checking isOperator): `sms.dev/requested-by: got
// "system:serviceaccount:sms-system:sms-controller-manager", want "dave"`.
func TestPluginRequestedByOperator(t *testing.T) {
	testenv.Need(t)
	serve(t)
	ns := newNamespace(t, false)
	c := as(t, operator)
	plugin := newPlugin(ns, "mirrored", map[string]string{smsv1.AnnotationRequestedBy: "dave"})
	must(t, c.Create(t.Context(), plugin))
	checkAnnotation(t, plugin, smsv1.AnnotationRequestedBy, "dave")
	must(t, update(t, c, plugin, func(p *smsv1.Plugin) {
		p.Spec.Version = "2.0.0"
		p.Annotations[smsv1.AnnotationRequestedBy] = "erin"
	}))
	checkAnnotation(t, plugin, smsv1.AnnotationRequestedBy, "erin")
}

// A Plugin a person creates gets the operator's finalizer at admission,
// next to any it brings, so the operator's first reconcile does not write
// the Plugin only to add it. The operator's own creates are left alone
// (its reconcile adds the finalizer). Seen failing with finalizerOps left
// out of pluginMutator.Handle.
func TestPluginFinalizerOnCreate(t *testing.T) {
	testenv.Need(t)
	serve(t)
	ns := newNamespace(t, false)
	bare := newPlugin(ns, "bare", nil)
	must(t, as(t, "alice").Create(t.Context(), bare))
	if want := []string{smsv1.FinalizerUninstall}; !slices.Equal(bare.Finalizers, want) {
		t.Errorf("finalizers of a new Plugin: got %v, want %v", bare.Finalizers, want)
	}
	own := newPlugin(ns, "own", nil)
	own.Finalizers = []string{"example.com/keep"}
	must(t, as(t, "alice").Create(t.Context(), own))
	if want := []string{"example.com/keep", smsv1.FinalizerUninstall}; !slices.Equal(own.Finalizers, want) {
		t.Errorf("finalizers of a new Plugin bringing its own: got %v, want %v", own.Finalizers, want)
	}
	mirrored := newPlugin(ns, "mirrored", nil)
	must(t, as(t, operator).Create(t.Context(), mirrored))
	if len(mirrored.Finalizers) != 0 {
		t.Errorf("finalizers of the operator's Plugin: got %v, want none", mirrored.Finalizers)
	}
}

// Where the operator does not reconcile, nobody would remove its
// finalizer, so a new Plugin there gets none. Seen failing with the
// namespace check left out of pluginMutator.Handle.
func TestPluginFinalizerOnlyWhereReconciled(t *testing.T) {
	serveNamespaces(t, []string{"somewhere-else"})
	ns := newNamespace(t, false)
	p := newPlugin(ns, "unwatched", nil)
	must(t, as(t, "alice").Create(t.Context(), p))
	if len(p.Finalizers) != 0 {
		t.Errorf("finalizers of a Plugin no operator reconciles: got %v, want none", p.Finalizers)
	}
}

// An agent-made Plugin keeps its code inline: the webhook refuses
// spec.codeFrom on one, whether a person creates it so or edits the
// mirror's copy, and says what to do instead; a Plugin of a person's own
// may take its code from a ConfigMap. Seen failing with agentCodeFrom left
// out of pluginMutator.Handle (both writes were admitted, and the mirror
// of the edited one stopped for good).
func TestAgentPluginRefusesCodeFrom(t *testing.T) {
	testenv.Need(t)
	serve(t)
	ns := newNamespace(t, false)
	alice := as(t, "alice")
	fromConfigMap := func(p *smsv1.Plugin) {
		p.Spec.Code = nil
		p.Spec.CodeFrom = &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "code"}, Key: "main.js"}
	}
	agentMade := func(p *smsv1.Plugin) { p.Labels = map[string]string{smsv1.LabelOrigin: string(smsv1.OriginAgent)} }

	created := newPlugin(ns, "created", nil)
	agentMade(created)
	fromConfigMap(created)
	checkErr(t, alice.Create(t.Context(), created), "spec.codeFrom: plugin created is agent-made")

	mirrored := newPlugin(ns, "mirrored", nil)
	agentMade(mirrored)
	must(t, as(t, operator).Create(t.Context(), mirrored))
	checkErr(t, update(t, alice, mirrored, fromConfigMap), "edit spec.code instead")

	own := newPlugin(ns, "own", nil)
	fromConfigMap(own)
	must(t, alice.Create(t.Context(), own))
}
