package baseline_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/baseline"
	"github.com/sms-baseline/sms/contracts/storetest"
)

// OpenStore picks the driver of Stores its spec's scheme names; a spec no
// driver answers to is refused with the forms the drivers accept. Seen
// failing with the sqlite driver left out of Stores.
func TestOpenStoreBySpec(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "nested", "kernel.db")
	st, err := baseline.OpenStore(ctx, "sqlite:"+path, "")
	if err != nil {
		t.Fatalf("OpenStore(sqlite:PATH) = %v", err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	for spec, want := range map[string]string{
		"mysql://db":    `open store: "mysql://db": want sqlite:PATH or a postgres:// URL`,
		"kernel.db":     `want sqlite:PATH or a postgres:// URL`,
		"sqlite:":       "names no file: use sqlite:PATH",
		"postgres:nope": "is not a postgres:// URL",
	} {
		if st, err := baseline.OpenStore(ctx, spec, ""); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("OpenStore(%q) = %v, %v; want an error containing %q", spec, st, err, want)
		}
	}
}

// A postgres:// or postgresql:// URL opens the tenant's schema on a real
// server (hack/postgres.sh start sets the URL).
func TestOpenStorePostgres(t *testing.T) {
	url := storetest.PostgresURL(t)
	for _, spec := range []string{url, "postgresql" + strings.TrimPrefix(url, "postgres")} {
		st, err := baseline.OpenStore(context.Background(), spec, "baseline_open_store")
		if err != nil {
			t.Fatalf("OpenStore(%s) = %v", strings.SplitN(spec, ":", 2)[0], err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
