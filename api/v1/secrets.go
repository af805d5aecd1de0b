package v1

// Keys of the credential Secrets the operator keeps for each tenant's
// kernel (the admin Secret <tenant>-kernel-admin and the chat Secret
// <tenant>-kernel-chat, named in TenantStatus).
const (
	// SecretKeyToken is the key of the bearer token in both credential
	// Secrets: the operator's admin token in the admin Secret, the chat
	// credential people use through kubectl sms in the chat Secret.
	SecretKeyToken = "token"
	// SecretKeyTokenAuth is the key, in the chat Secret, of the kernel's
	// --token-auth-file: one CSV line per credential (token, name,
	// scopes). A kernel pod mounts it under this name.
	SecretKeyTokenAuth = "tokens.csv"
)

// The keys of the Secret TenantUsers.BootstrapAdminSecretRef names; a
// kernel pod mounts them under these names.
const (
	SecretKeyLogin    = "login"
	SecretKeyPassword = "password"
)

// The keys of the Secret spec.objects.s3.credentialsSecretRef names: an S3
// access key and its secret key.
const (
	SecretKeyAccessKey = "accessKey"
	SecretKeySecretKey = "secretKey"
)
