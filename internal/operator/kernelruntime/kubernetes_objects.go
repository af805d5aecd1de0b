package kernelruntime

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/kernelcmd/kernelconfig"
)

// Names, paths and numbers of a kernel's Kubernetes objects. The paths
// are where the container finds what the kernel's flags point at.
const (
	k8sContainerName = "kernel"
	k8sPortName      = "http"
	k8sPort          = KernelPort
	k8sAdminPortName = "admin"
	k8sAdminPort     = KernelAdminPort
	k8sUID           = 65532 // the distroless "nonroot" user

	k8sDataVolume    = "data"
	k8sDataPath      = "/data"
	k8sAdminVolume   = "admin-token"
	k8sAdminPath     = "/var/run/sms/admin"
	k8sChatVolume    = "chat-tokens"
	k8sChatPath      = "/var/run/sms/chat"
	k8sKeyVolume     = "model-key"
	k8sObjectsVolume = "objects-credentials"
	k8sKeyPath       = "/var/run/sms/model"
	k8sObjectsPath   = "/var/run/sms/objects"
	k8sScriptVolume  = "model-script"
	k8sScriptPath    = "/etc/sms/model"
	k8sTmpVolume     = "tmp"
	k8sTmpPath       = "/tmp"
	k8sBootVolume    = "bootstrap-admin"
	k8sBootPath      = "/var/run/sms/bootstrap-admin"

	k8sKeyFile     = "key"
	k8sScriptFile  = "script.json"
	k8sPostgresEnv = "SMS_POSTGRES_URL"
)

// k8sDefaultSize is the sqlite volume's size when spec.storage.sqlite.size
// is not set.
var k8sDefaultSize = resource.MustParse("1Gi")

// k8sKernel is one tenant's kernel as the kubernetes runtime sees it: the
// spec, validated, with what is derived from it once.
type k8sKernel struct {
	tenant      *smsv1.Tenant
	name        string
	image       string
	command     []string // the container's command; nil runs the image's entrypoint
	adminSecret string
	chatSecret  string
	checksum    string // Spec.Checksum
	operatorNS  string
	sqlite      bool
	config      kernelconfig.Config
}

func newK8sKernel(spec Spec, opts KubernetesOptions) (*k8sKernel, error) {
	t := spec.Tenant
	if t == nil {
		return nil, errors.New("kubernetes runtime: spec has no tenant")
	}
	if spec.AdminTokenSecret == "" || spec.ChatTokenSecret == "" {
		return nil, fmt.Errorf("tenant %s/%s: no admin or chat token secret to mount", t.Namespace, t.Name)
	}
	k := &k8sKernel{
		tenant:      t,
		name:        KernelName(t.Name),
		image:       t.Spec.Image,
		adminSecret: spec.AdminTokenSecret,
		checksum:    spec.Checksum(),
		chatSecret:  spec.ChatTokenSecret,
		operatorNS:  opts.OperatorNamespace,
	}
	if k.image == "" {
		k.image, k.command = opts.Image, opts.Command
	}
	if k.image == "" {
		return nil, fmt.Errorf("tenant %s/%s: no kernel image: set spec.image or the operator's default image", t.Namespace, t.Name)
	}
	cfg, err := k8sConfig(t)
	if err != nil {
		return nil, fmt.Errorf("tenant %s/%s: %w", t.Namespace, t.Name, err)
	}
	k.config = cfg
	k.sqlite = t.Spec.Storage.Driver != smsv1.StoragePostgres
	return k, nil
}

// k8sConfig is the `manager kernel` configuration of the tenant's
// container, with the paths its volumes are mounted at.
func k8sConfig(t *smsv1.Tenant) (kernelconfig.Config, error) {
	cfg := kernelconfig.Config{
		Listen:            fmt.Sprintf("0.0.0.0:%d", k8sPort),
		AdminListen:       fmt.Sprintf("0.0.0.0:%d", k8sAdminPort),
		Name:              t.Namespace + "/" + t.Name,
		Tenant:            t.Namespace + "/" + t.Name,
		TokenFile:         k8sAdminPath + "/" + smsv1.SecretKeyToken,
		TokenAuthFile:     k8sChatPath + "/" + smsv1.SecretKeyTokenAuth,
		Executor:          string(t.Spec.Executor),
		AutoApprove:       t.Spec.Judge.AutoApprove,
		SafeMode:          t.Spec.SafeMode,
		AgentCapabilities: t.Spec.Judge.AgentCapabilities,
		SystemPlugins:     SystemPluginNames(t.Spec.SystemPlugins),
	}
	if cfg.Executor == "" {
		cfg.Executor = kernelconfig.Defaults.Executor
	}
	cfg.Approvers, cfg.ApproverGroups = Approvers(t)
	cfg.Budget = Budget(t)
	if d := t.Spec.SandboxIdle; d != nil {
		cfg.SandboxIdle = d.Duration
	}
	if len(t.Spec.Judge.SensitivePoints) > 0 {
		cfg.SensitivePoints = t.Spec.Judge.SensitivePoints
	}
	if len(t.Spec.Judge.SensitiveScopes) > 0 {
		cfg.SensitiveScopes = t.Spec.Judge.SensitiveScopes
	}
	switch st := t.Spec.Storage; st.Driver {
	case "", smsv1.StorageSQLite:
		cfg.Store = "sqlite:" + k8sDataPath + "/kernel.db"
	case smsv1.StoragePostgres:
		if st.Postgres == nil {
			return cfg, errors.New("spec.storage.postgres is required when the driver is postgres")
		}
		// The kubelet expands $(VAR) in args, so the URL stays in its Secret.
		cfg.Store = "$(" + k8sPostgresEnv + ")"
		cfg.Schema = PostgresSchema(t) // shared with the local runtime
	default:
		return cfg, fmt.Errorf("unknown storage driver %q: use sqlite or postgres", st.Driver)
	}
	if o := t.Spec.Objects; o != nil {
		sqlite := t.Spec.Storage.Driver == "" || t.Spec.Storage.Driver == smsv1.StorageSQLite
		switch {
		case o.Driver == smsv1.ObjectsFS && !sqlite:
			return cfg, errors.New("spec.objects.driver fs keeps files on the kernel's volume, which only sqlite storage has: use s3")
		case o.Driver == smsv1.ObjectsFS:
			cfg.Objects = "fs:" + k8sDataPath + "/objects"
		default:
			cfg.Objects, cfg.ObjectsCredentialsFile = ObjectsSpec(t), k8sObjectsPath
		}
	}
	if a := t.Spec.Agent; a != nil {
		// The kubelet expands $(VAR) in args, and $$ is a literal $: the
		// identity must never reach the pod's variables.
		cfg.Agent = kernelconfig.Agent{Identity: strings.ReplaceAll(a.Identity, "$", "$$"), MaxSteps: int(a.MaxSteps)}
	}
	if u := t.Spec.Users; u != nil {
		// Under the operator no session approves: decisions come through
		// Approval objects.
		cfg.Users, cfg.NoSessionApprove = true, true
		if u.BootstrapAdminSecretRef != nil {
			cfg.BootstrapAdminFile = k8sBootPath
		}
	}
	if m := t.Spec.Model; m != nil {
		cfg.Model = ModelConfig(m)
		if m.Provider == smsv1.ModelScripted {
			if m.ScriptConfigMapRef == nil {
				return cfg, errors.New("spec.model.scriptConfigMapRef is required for the scripted model")
			}
			cfg.Model.Script = k8sScriptPath + "/" + k8sScriptFile
		}
		if m.KeySecretRef != nil {
			cfg.Model.KeyFile = k8sKeyPath + "/" + k8sKeyFile
		}
	}
	return cfg, nil
}

// labels selects the kernel's pods; every object gets them. A new map
// each call, so objects never share one.
func (k *k8sKernel) labels() map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":     "sms-kernel",
		"app.kubernetes.io/instance": k.tenant.Name,
		smsv1.LabelTenant:            k.tenant.Name,
	}
}

func (k *k8sKernel) claimTemplates() []corev1.PersistentVolumeClaim {
	if !k.sqlite {
		return nil
	}
	size := k8sDefaultSize.DeepCopy()
	var class *string
	if s := k.tenant.Spec.Storage.SQLite; s != nil {
		if s.Size != nil {
			size = s.Size.DeepCopy()
		}
		class = s.StorageClassName
	}
	return []corev1.PersistentVolumeClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: k8sDataVolume, Labels: k.labels()},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: class,
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: size},
			},
		},
	}}
}

// mutatePodSpec sets what the runtime owns in the pod template and keeps
// what the API server defaulted (restartPolicy, dnsPolicy, schedulerName,
// terminationGracePeriodSeconds, ...). Only the kernel container stays.
func (k *k8sKernel) mutatePodSpec(ps *corev1.PodSpec) {
	ps.AutomountServiceAccountToken = ptr.To(false)
	ps.SecurityContext = k8sPodSecurity(ps.SecurityContext)
	ps.Volumes = k.volumes()
	var c corev1.Container
	for _, have := range ps.Containers {
		if have.Name == k8sContainerName {
			c = have
		}
	}
	k.mutateContainer(&c)
	ps.Containers = []corev1.Container{c}
}

// mutateContainer keeps terminationMessagePath and terminationMessagePolicy
// as defaulted; the pull policy is set as the server would default it, so
// that it follows the image when spec.image changes.
func (k *k8sKernel) mutateContainer(c *corev1.Container) {
	c.Name = k8sContainerName
	c.Image = k.image
	c.ImagePullPolicy = k8sPullPolicy(k.image)
	c.Command = k.command // nil runs the image's entrypoint
	c.Args = k.config.Args()
	c.Env = k.env()
	c.Ports = []corev1.ContainerPort{
		{Name: k8sPortName, ContainerPort: k8sPort, Protocol: corev1.ProtocolTCP},
		{Name: k8sAdminPortName, ContainerPort: k8sAdminPort, Protocol: corev1.ProtocolTCP},
	}
	c.VolumeMounts = k.mounts()
	c.Resources = *k.tenant.Spec.Resources.DeepCopy()
	c.ReadinessProbe = k8sProbe("/readyz")
	c.LivenessProbe = k8sProbe("/healthz")
	c.SecurityContext = k8sContainerSecurity(c.SecurityContext)
}

func (k *k8sKernel) env() []corev1.EnvVar {
	pg := k.tenant.Spec.Storage.Postgres
	if k.sqlite || pg == nil {
		return nil
	}
	return []corev1.EnvVar{{
		Name:      k8sPostgresEnv,
		ValueFrom: &corev1.EnvVarSource{SecretKeyRef: pg.URLSecretRef.DeepCopy()},
	}}
}

func (k *k8sKernel) volumes() []corev1.Volume {
	vols := []corev1.Volume{
		{Name: k8sAdminVolume, VolumeSource: k8sSecretVolume(k.adminSecret, smsv1.SecretKeyToken, smsv1.SecretKeyToken)},
		{Name: k8sChatVolume, VolumeSource: k8sSecretVolume(k.chatSecret, smsv1.SecretKeyTokenAuth, smsv1.SecretKeyTokenAuth)},
		{Name: k8sTmpVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	if u := k.tenant.Spec.Users; u != nil && u.BootstrapAdminSecretRef != nil {
		vols = append(vols, corev1.Volume{Name: k8sBootVolume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: u.BootstrapAdminSecretRef.Name,
			Items: []corev1.KeyToPath{{Key: smsv1.SecretKeyLogin, Path: kernelconfig.FileLogin},
				{Key: smsv1.SecretKeyPassword, Path: kernelconfig.FilePassword}},
			DefaultMode: ptr.To(corev1.SecretVolumeSourceDefaultMode),
		}}})
	}
	if o := k.tenant.Spec.Objects; o != nil && o.Driver == smsv1.ObjectsS3 && o.S3 != nil {
		vols = append(vols, corev1.Volume{Name: k8sObjectsVolume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: o.S3.CredentialsSecretRef.Name,
			Items: []corev1.KeyToPath{{Key: smsv1.SecretKeyAccessKey, Path: kernelconfig.FileAccessKey},
				{Key: smsv1.SecretKeySecretKey, Path: kernelconfig.FileSecretKey}},
			DefaultMode: ptr.To(corev1.SecretVolumeSourceDefaultMode),
		}}})
	}
	m := k.tenant.Spec.Model
	if m == nil {
		return vols
	}
	if ref := m.KeySecretRef; ref != nil {
		vols = append(vols, corev1.Volume{Name: k8sKeyVolume, VolumeSource: k8sSecretVolume(ref.Name, ref.Key, k8sKeyFile)})
	}
	if ref := m.ScriptConfigMapRef; ref != nil && m.Provider == smsv1.ModelScripted {
		src := corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: ref.LocalObjectReference,
			Items:                []corev1.KeyToPath{{Key: ref.Key, Path: k8sScriptFile}},
			DefaultMode:          ptr.To(corev1.ConfigMapVolumeSourceDefaultMode),
		}}
		vols = append(vols, corev1.Volume{Name: k8sScriptVolume, VolumeSource: src})
	}
	return vols
}

// k8sSecretVolume projects one key of a Secret to the file path. The
// default mode is spelled out because the API server would fill it in.
func k8sSecretVolume(secret, key, path string) corev1.VolumeSource {
	return corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName:  secret,
		Items:       []corev1.KeyToPath{{Key: key, Path: path}},
		DefaultMode: ptr.To(corev1.SecretVolumeSourceDefaultMode),
	}}
}

func (k *k8sKernel) mounts() []corev1.VolumeMount {
	mounts := []corev1.VolumeMount{
		{Name: k8sAdminVolume, MountPath: k8sAdminPath, ReadOnly: true},
		{Name: k8sChatVolume, MountPath: k8sChatPath, ReadOnly: true},
		{Name: k8sTmpVolume, MountPath: k8sTmpPath},
	}
	if k.sqlite {
		mounts = append(mounts, corev1.VolumeMount{Name: k8sDataVolume, MountPath: k8sDataPath})
	}
	if k.config.Model.KeyFile != "" {
		mounts = append(mounts, corev1.VolumeMount{Name: k8sKeyVolume, MountPath: k8sKeyPath, ReadOnly: true})
	}
	if k.config.BootstrapAdminFile != "" {
		mounts = append(mounts, corev1.VolumeMount{Name: k8sBootVolume, MountPath: k8sBootPath, ReadOnly: true})
	}
	if k.config.ObjectsCredentialsFile != "" {
		mounts = append(mounts, corev1.VolumeMount{Name: k8sObjectsVolume, MountPath: k8sObjectsPath, ReadOnly: true})
	}
	if k.config.Model.Script != "" {
		mounts = append(mounts, corev1.VolumeMount{Name: k8sScriptVolume, MountPath: k8sScriptPath, ReadOnly: true})
	}
	return mounts
}

// k8sProbe probes path on the http port, with the API server's default
// timing spelled out.
func k8sProbe(path string) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path:   path,
			Port:   intstr.FromString(k8sPortName),
			Scheme: corev1.URISchemeHTTP,
		}},
		TimeoutSeconds:   1,
		PeriodSeconds:    10,
		SuccessThreshold: 1,
		FailureThreshold: 3,
	}
}

// k8sPodSecurity sets the pod's security context in place, keeping fields
// the API server may default. fsGroup makes the data volume writable by
// the non-root user.
func k8sPodSecurity(sc *corev1.PodSecurityContext) *corev1.PodSecurityContext {
	if sc == nil {
		sc = &corev1.PodSecurityContext{}
	}
	sc.RunAsNonRoot = ptr.To(true)
	sc.RunAsUser = ptr.To[int64](k8sUID)
	sc.RunAsGroup = ptr.To[int64](k8sUID)
	sc.FSGroup = ptr.To[int64](k8sUID)
	sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	return sc
}

// k8sContainerSecurity sets the container's security context in place,
// keeping fields the API server may default (procMount).
func k8sContainerSecurity(sc *corev1.SecurityContext) *corev1.SecurityContext {
	if sc == nil {
		sc = &corev1.SecurityContext{}
	}
	sc.RunAsNonRoot = ptr.To(true)
	sc.RunAsUser = ptr.To[int64](k8sUID)
	sc.RunAsGroup = ptr.To[int64](k8sUID)
	sc.AllowPrivilegeEscalation = ptr.To(false)
	sc.ReadOnlyRootFilesystem = ptr.To(true)
	sc.Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
	sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	return sc
}

// k8sPullPolicy is the API server's default for image: Always for an
// untagged or :latest image, else IfNotPresent. Setting it ourselves keeps
// it right when the image changes, which defaulting (on create only)
// would not.
func k8sPullPolicy(image string) corev1.PullPolicy {
	if strings.Contains(image, "@") {
		return corev1.PullIfNotPresent
	}
	name := image[strings.LastIndex(image, "/")+1:]
	i := strings.LastIndex(name, ":")
	if i < 0 || name[i+1:] == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

// KernelPort is the port a kernel pod serves the application's routes on.
const KernelPort = 8787

// KernelAdminPort is the port a kernel pod serves its admin API on; a
// NetworkPolicy admits only the operator to it.
const KernelAdminPort = 8788

// KernelName is the name of a tenant's kernel StatefulSet and Service;
// its pod is KernelName(tenant)+"-0".
func KernelName(tenant string) string { return tenant + "-kernel" }

// ModelConfig is the kernel's model configuration for a Tenant's model:
// every field but the key and script files, which each runtime places
// where it keeps them. Both runtimes read the spec through it.
func ModelConfig(m *smsv1.TenantModel) kernelconfig.Model {
	return kernelconfig.Model{Provider: string(m.Provider), Name: m.Name, BaseURL: m.BaseURL,
		Effort: m.Effort, ThinkingBudget: int(m.ThinkingBudget)}
}
