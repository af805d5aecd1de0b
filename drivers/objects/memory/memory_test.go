package memory_test

import (
	"testing"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/contracts/objectstoretest"
	"github.com/sms-baseline/sms/drivers/objects/memory"
)

func TestConformance(t *testing.T) {
	objectstoretest.Run(t, func(*testing.T) contracts.ObjectStore { return memory.New() })
}
