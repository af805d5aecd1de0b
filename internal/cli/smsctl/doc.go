// Package smsctl is the kubectl sms plugin: approve and deny pending
// plugins, summarise a tenant, chat with its agent, export its mounted
// plugins as Plugin YAML and read its kernel's event log. It reads the
// standard kubectl flags (--kubeconfig, --context, -n) through
// k8s.io/cli-runtime, and reaches a kernel directly when the operator
// runs it on this machine (manager dev) or through a port forward to its
// pod in a cluster.
package smsctl
