package postgres_test

import (
	"context"
	"testing"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/contracts/storetest"
	"github.com/sms-baseline/sms/drivers/store/postgres"
)

func benchStore(b *testing.B) contracts.Store {
	b.Helper()
	url, schema := freshSchema(b)
	st, err := postgres.OpenStore(context.Background(), postgres.Options{URL: url, Schema: schema})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	return st
}

// BenchmarkAppendEvent appends to a tenant schema over a loopback connection.
func BenchmarkAppendEvent(b *testing.B) { storetest.BenchAppend(b, benchStore(b)) }

// BenchmarkRestore restores a kernel from a schema holding 10,000 events.
func BenchmarkRestore(b *testing.B) { storetest.BenchRestore(b, benchStore(b)) }
