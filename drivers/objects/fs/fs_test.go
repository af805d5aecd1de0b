package fs_test

import (
	"fmt"
	"testing"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/contracts/objectstoretest"
	"github.com/sms-baseline/sms/drivers/objects/fs"
)

func TestConformance(t *testing.T) {
	objectstoretest.Run(t, func(t *testing.T) contracts.ObjectStore {
		st, err := fs.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}

func BenchmarkPutGet(b *testing.B) {
	for _, size := range []int64{1 << 20, 64 << 20} {
		b.Run(fmt.Sprintf("size=%dMiB", size>>20), func(b *testing.B) {
			st, err := fs.New(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			objectstoretest.BenchPutGet(b, st, size)
		})
	}
}
