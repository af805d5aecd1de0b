package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/contracts/storetest"
	"github.com/sms-baseline/sms/drivers/store/sqlite"
)

func benchStore(b *testing.B) contracts.Store {
	b.Helper()
	st, err := sqlite.OpenStore(context.Background(), filepath.Join(b.TempDir(), "kernel.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	return st
}

// BenchmarkAppendEvent appends to a file in WAL mode with full sync.
func BenchmarkAppendEvent(b *testing.B) { storetest.BenchAppend(b, benchStore(b)) }

// BenchmarkRestore restores a kernel from a file holding 10,000 events.
func BenchmarkRestore(b *testing.B) { storetest.BenchRestore(b, benchStore(b)) }
