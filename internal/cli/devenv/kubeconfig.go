package devenv

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// contextName is the kubeconfig context manager dev writes.
const contextName = "sms-dev"

// writeKubeconfig writes cfg (a client-certificate identity) as a
// kubeconfig with one cluster, user and context, all named sms-dev.
func writeKubeconfig(path string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[contextName] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[contextName] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: contextName, Namespace: "default"}
	kc.CurrentContext = contextName
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("write the kubeconfig: %w", err)
	}
	return nil
}
