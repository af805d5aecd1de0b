package contracts

import "github.com/sms-baseline/sms/kernel"

// DatabaseKey is the kernel key whose value is the tenant's Database. The
// composition root provides it from a system plugin; plugins that keep
// tables (collections, scheduler) inject it.
const DatabaseKey = "database"

// DatabaseKeyMeta is the trust of DatabaseKey: only system fibers provide
// or read the database. Agent code reaches data through plugin services.
var DatabaseKeyMeta = kernel.KeyMeta{
	Description:      "the tenant's SQL database (contracts.Database)",
	MinProviderTrust: kernel.TrustSystem,
	MinConsumerTrust: kernel.TrustSystem,
}
