package s3_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/contracts/objectstoretest"
	"github.com/sms-baseline/sms/drivers/objects/s3"
)

// server is the S3 server hack/s3.sh started, or the test skips (fails
// under SMS_REQUIRE_S3, as make test sets it).
func server(t testing.TB) s3.Options {
	t.Helper()
	endpoint := os.Getenv("SMS_TEST_S3_ENDPOINT")
	if endpoint == "" {
		if os.Getenv("SMS_REQUIRE_S3") != "" {
			t.Fatal("SMS_REQUIRE_S3 is set but SMS_TEST_S3_ENDPOINT is empty: start a server with `eval \"$(hack/s3.sh start)\"`")
		}
		t.Skip("SMS_TEST_S3_ENDPOINT is not set: start a server with `eval \"$(hack/s3.sh start)\"` to run the S3 tests")
	}
	return s3.Options{Endpoint: endpoint, Region: "us-east-1", Bucket: "sms-test",
		AccessKey: os.Getenv("SMS_TEST_S3_ACCESS_KEY"), SecretKey: os.Getenv("SMS_TEST_S3_SECRET_KEY")}
}

// open is a store on a prefix of its own in the test bucket.
func open(t testing.TB) *s3.Store {
	t.Helper()
	opts := server(t)
	opts.Prefix = "t-" + strings.ToLower(rand.Text()) + "/"
	st, err := s3.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.EnsureBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestConformance(t *testing.T) {
	objectstoretest.Run(t, func(t *testing.T) contracts.ObjectStore { return open(t) })
}

// TestOptions: a bad endpoint, bucket or prefix is refused by New.
func TestOptions(t *testing.T) {
	for _, o := range []s3.Options{
		{},
		{Bucket: "b", Endpoint: "ftp://host"},
		{Bucket: "b", Endpoint: "http://host/path"},
		{Bucket: "b", Prefix: "no-slash"},
		{Bucket: "b", Prefix: "../x/"},
	} {
		if _, err := s3.New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
	if _, err := s3.New(s3.Options{Bucket: "b", Endpoint: "https://acct.r2.cloudflarestorage.com", Region: "auto", Prefix: "tenants/acme/"}); err != nil {
		t.Errorf("an R2 endpoint: %v", err)
	}
}

func BenchmarkPutGet(b *testing.B) {
	for _, size := range []int64{1 << 20, 64 << 20} {
		b.Run(fmt.Sprintf("size=%dMiB", size>>20), func(b *testing.B) {
			objectstoretest.BenchPutGet(b, open(b), size)
		})
	}
}
