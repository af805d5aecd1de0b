package contracts

import "github.com/sms-baseline/sms/kernel"

// Store is everything a kernel persists, on one database: the event log, the
// content-addressed blob store, and the database itself, which plugins such
// as collections share for their own tables (kernel tables are named
// kernel_*, so plugin tables must not be).
//
// Every method is safe for concurrent use. The log and blob store keep the
// kernel's contracts (kernel.EventLog, kernel.BlobStore): Append returns
// only once the event is durable and assigns sequence numbers 1, 2, 3, ...
// without gaps, in the order the appends committed; Get of an unknown hash
// fails with kernel.CodeNotFound. Append refuses Data that is not valid
// UTF-8 JSON with kernel.CodeValidation.
type Store interface {
	// Database is the database the store lives in. It is closed by Close.
	Database() Database
	// Log is the kernel's event log.
	Log() kernel.EventLog
	// Blobs is the kernel's blob store.
	Blobs() kernel.BlobStore
	// Close closes the store and its database. Closing twice is not an error.
	Close() error
}
