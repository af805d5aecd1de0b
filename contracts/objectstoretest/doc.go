// Package objectstoretest is the conformance suite of contracts.ObjectStore:
// every object storage driver runs Run, so that plugins can rely on the
// contract whatever the driver.
package objectstoretest
