package operator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	smswebhook "github.com/sms-baseline/sms/internal/operator/webhook"
)

// WebhookCerts has the operator make, rotate and publish its own webhook
// serving certificate (with github.com/open-policy-agent/cert-controller),
// for clusters without cert-manager. cert-manager stays the documented
// production path; with it, Secret is empty and the certificate is read
// from Webhook.CertDir.
type WebhookCerts struct {
	// Secret, in OperatorNamespace, keeps the CA and the serving
	// certificate across restarts. Empty turns the rotation off.
	Secret string
	// Service is the webhook Service's name: the certificate is for
	// <Service>.<OperatorNamespace>.svc.
	Service string
	// Mutating and Validating name the webhook configurations whose
	// caBundle the operator keeps current.
	Mutating, Validating string
}

// registerWebhooks registers the admission webhooks: at once when their
// certificate comes from files, or, when the operator rotates its own,
// once the certificate the rotator keeps in the Secret has reached
// Webhook.CertDir, where the kubelet mounts that Secret (the webhook
// server starts when the first webhook registers, and would fail on
// missing files before that).
func registerWebhooks(mgr manager.Manager, opts Options) error {
	wopts := smswebhook.Options{OperatorUser: opts.OperatorUser, Namespaces: opts.Namespaces}
	c := opts.WebhookCerts
	if c.Secret == "" {
		return smswebhook.Register(mgr, wopts)
	}
	if opts.OperatorNamespace == "" || c.Service == "" || c.Mutating == "" || c.Validating == "" {
		return errors.New("self-managed webhook certificates need the operator's namespace, the webhook Service and both webhook configurations")
	}
	dir := opts.Webhook.CertDir
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs")
	}
	certsReady, registered := make(chan struct{}), make(chan struct{})
	err := rotator.AddRotator(mgr, &rotator.CertRotator{
		SecretKey:      types.NamespacedName{Namespace: opts.OperatorNamespace, Name: c.Secret},
		CertDir:        dir,
		CAName:         "sms-webhook-ca",
		CAOrganization: "sms",
		DNSName:        fmt.Sprintf("%s.%s.svc", c.Service, opts.OperatorNamespace),
		IsReady:        certsReady,
		Webhooks: []rotator.WebhookInfo{{Name: c.Mutating, Type: rotator.Mutating},
			{Name: c.Validating, Type: rotator.Validating}},
	})
	if err != nil {
		return fmt.Errorf("webhook certificate rotation: %w", err)
	}
	err = mgr.Add(&deferredWebhooks{mgr: mgr, opts: wopts, certsReady: certsReady, registered: registered})
	if err != nil {
		return err
	}
	if opts.ProbeAddr == "0" || opts.ProbeAddr == "" {
		return nil
	}
	return mgr.AddReadyzCheck("webhook-certificate", func(*http.Request) error {
		select {
		case <-registered:
			return nil
		default:
			return errors.New("the webhook certificate is not ready yet")
		}
	})
}

// deferredWebhooks registers the webhooks once the certificate is ready.
// Every replica serves the webhooks, leader or not, since the webhook
// Service sends requests to any ready replica.
type deferredWebhooks struct {
	mgr                    manager.Manager
	opts                   smswebhook.Options
	certsReady, registered chan struct{}
}

// NeedLeaderElection reports false: followers serve webhooks too.
func (d *deferredWebhooks) NeedLeaderElection() bool { return false }

// Start waits for the certificate, registers the webhooks (which starts
// the webhook server) and returns when ctx ends.
func (d *deferredWebhooks) Start(ctx context.Context) error {
	select {
	case <-d.certsReady:
	case <-ctx.Done():
		return nil
	}
	if err := smswebhook.Register(d.mgr, d.opts); err != nil {
		return err
	}
	ctrl.Log.Info("Webhook certificate ready; serving the admission webhooks")
	close(d.registered)
	<-ctx.Done()
	return nil
}
