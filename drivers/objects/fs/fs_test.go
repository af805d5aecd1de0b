package fs_test

import (
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
