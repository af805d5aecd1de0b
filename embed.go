// The files the binaries embed: the CRDs and the webhook configuration
// `manager dev` installs, the samples it points people at, the scripted
// demo model's turns, and the script that builds kube-apiserver and etcd.

package sms

import "embed"

// Files holds those files at their paths in the repository.
//
//go:embed config/crd/bases/*.yaml config/webhook/manifests.yaml config/samples/*.yaml
//go:embed hack/setup-envtest.sh docs/examples/scripted-doubler.json
var Files embed.FS
