package kernelcmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sms-baseline/sms/contracts"
)

// TestOpenObjects: each --objects form opens a store that works; the S3
// form runs against hack/s3.sh's server when one is up. Seen failing with
// the fs form opening the directory's parent (the object landed outside).
func TestOpenObjects(t *testing.T) {
	dir := t.TempDir()
	specs := map[string]string{"memory": "", "fs:" + filepath.Join(dir, "files"): ""}
	if ep := os.Getenv("SMS_TEST_S3_ENDPOINT"); ep != "" {
		creds := filepath.Join(dir, "creds")
		if err := os.WriteFile(creds, []byte(os.Getenv("SMS_TEST_S3_ACCESS_KEY")+"\n"+os.Getenv("SMS_TEST_S3_SECRET_KEY")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		specs["s3://kernelcmd-test?endpoint="+ep+"&region=us-east-1&prefix=t/"] = creds
	}
	for spec, creds := range specs {
		st, err := openObjects(context.Background(), spec, creds)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if _, err := st.Put(context.Background(), "a/b", bytes.NewReader([]byte("x")), contracts.PutOptions{Size: 1}); err != nil {
			t.Fatalf("%s: put: %v", spec, err)
		}
		if _, err := st.Head(context.Background(), "a/b"); err != nil {
			t.Fatalf("%s: head: %v", spec, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "files", "objects", "a.d", "b.o")); err != nil {
		t.Fatalf("the fs store is not in its directory: %v", err)
	}
	// A mounted Secret: a directory of accessKey and secretKey.
	secret := filepath.Join(dir, "secret")
	_ = os.MkdirAll(secret, 0o700)
	_ = os.WriteFile(filepath.Join(secret, "accessKey"), []byte("AK\n"), 0o600)
	_ = os.WriteFile(filepath.Join(secret, "secretKey"), []byte("SK"), 0o600)
	if a, s, err := readCredentials(secret); a != "AK" || s != "SK" || err != nil {
		t.Fatalf("a Secret's directory: %q %q %v", a, s, err)
	}
	if st, err := openObjects(context.Background(), "", ""); st != nil || err != nil {
		t.Fatalf("no --objects: %v %v", st, err)
	}
}
