package smsctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/operator/kernelruntime"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// kernel returns a client for the tenant's kernel admin API, with the
// chat credential from the tenant's Secret (read and chat: people approve
// through Approval objects, never with a kernel credential), and a func
// that closes the connection.
func (o *options) kernel(ctx context.Context, tenant string) (*adminv1.Client, func(), error) {
	base, token, stop, err := o.endpoint(ctx, tenant)
	if err != nil {
		return nil, nil, err
	}
	return adminv1.New(base, token, &http.Client{}), stop, nil // no timeout: a chat turn or a followed log lasts
}

// endpoint returns the base URL of the tenant's kernel admin API, the chat
// credential from the tenant's Secret, and a func that closes the
// connection. A kernel on this machine (manager dev) is called at its
// endpoint; one in a cluster through a port forward to its pod's admin
// port, as `kubectl port-forward` does.
func (o *options) endpoint(ctx context.Context, tenant string) (string, string, func(), error) {
	c, ns, err := o.client()
	if err != nil {
		return "", "", nil, err
	}
	var t smsv1.Tenant
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: tenant}, &t); err != nil {
		return "", "", nil, notFound(err, "tenant", tenant, ns)
	}
	if t.Status.AdminEndpoint == "" || t.Status.ChatTokenSecret == "" {
		return "", "", nil, fmt.Errorf("tenant %s has no kernel to talk to yet: %s", tenant, kernelLine(t))
	}
	var s corev1.Secret
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: t.Status.ChatTokenSecret}, &s); err != nil {
		return "", "", nil, fmt.Errorf("read the kernel's chat credential: %w", err)
	}
	token := string(s.Data[smsv1.SecretKeyToken])
	u, err := url.Parse(t.Status.AdminEndpoint)
	if err != nil {
		return "", "", nil, fmt.Errorf("tenant %s: admin endpoint %q: %w", tenant, t.Status.AdminEndpoint, err)
	}
	if isLoopback(u.Hostname()) {
		return t.Status.AdminEndpoint, token, func() {}, nil
	}
	base, stop, err := o.forward(ns, kernelruntime.KernelName(tenant)+"-0")
	if err != nil {
		return "", "", nil, err
	}
	return base, token, stop, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// forward opens a port forward to the kernel port of pod and returns the
// local base URL and a func that closes it.
func (o *options) forward(ns, pod string) (string, func(), error) {
	cfg, err := o.restConfig()
	if err != nil {
		return "", nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", nil, err
	}
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return "", nil, err
	}
	target := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, target)
	stop, ready := make(chan struct{}), make(chan struct{})
	var errOut strings.Builder
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{"0:" + strconv.Itoa(kernelruntime.KernelAdminPort)}, stop, ready, io.Discard, &errOut)
	if err != nil {
		return "", nil, err
	}
	failed := make(chan error, 1)
	go func() { failed <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-failed:
		return "", nil, errors.Join(fmt.Errorf("port-forward to pod %s/%s: %s", ns, pod, errOut.String()), err)
	}
	ports, err := fw.GetPorts()
	if err == nil && len(ports) == 0 {
		err = errors.New("no local port")
	}
	if err != nil {
		close(stop)
		return "", nil, fmt.Errorf("port-forward to pod %s/%s: %w", ns, pod, err)
	}
	return "http://127.0.0.1:" + strconv.Itoa(int(ports[0].Local)), func() { close(stop) }, nil
}
