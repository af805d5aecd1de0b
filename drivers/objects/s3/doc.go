// Package s3 is an object store in an S3 bucket, through
// github.com/minio/minio-go/v7: contracts.ObjectStore for AWS S3 and every
// S3-compatible service (Cloudflare R2, MinIO, Versity's gateway), which
// differ only in their endpoint.
//
// A put is one PutObject of the declared size, which S3 stores whole or
// not at all; a body shorter or longer than declared is refused before or
// while it is sent, so nothing is stored. A prefix of the bucket
// (Options.Prefix) keeps several tenants in one bucket apart.
package s3
