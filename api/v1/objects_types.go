package v1

import corev1 "k8s.io/api/core/v1"

// ObjectsDriver names where a tenant's files go.
// +kubebuilder:validation:Enum=fs;s3
type ObjectsDriver string

// Object store drivers.
const (
	// ObjectsFS keeps files on the kernel's volume (sqlite storage only).
	ObjectsFS ObjectsDriver = "fs"
	// ObjectsS3 keeps files in an S3 bucket (AWS, R2, MinIO...).
	ObjectsS3 ObjectsDriver = "s3"
)

// TenantObjects is a tenant's object store.
// +kubebuilder:validation:XValidation:rule="self.driver != 's3' || has(self.s3)",message="spec.objects.s3 is required when the driver is s3"
type TenantObjects struct {
	Driver ObjectsDriver `json:"driver"`
	// +optional
	S3 *TenantS3 `json:"s3,omitempty"`
}

// TenantS3 is a bucket of an S3-compatible service.
type TenantS3 struct {
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=63
	Bucket string `json:"bucket"`
	// Endpoint is the service's URL (AWS S3 when empty;
	// https://<account>.r2.cloudflarestorage.com for R2).
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
	// Region is the bucket's region ("auto" for R2).
	// +optional
	Region string `json:"region,omitempty"`
	// Prefix keeps tenants sharing the bucket apart; it ends with "/".
	// Default "<namespace>/<name>/".
	// +optional
	Prefix string `json:"prefix,omitempty"`
	// CredentialsSecretRef names a Secret with the keys accessKey and
	// secretKey.
	CredentialsSecretRef corev1.LocalObjectReference `json:"credentialsSecretRef"`
}
