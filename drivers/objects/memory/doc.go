// Package memory is an object store in memory: contracts.ObjectStore for
// tests and development. Objects live as long as the Store.
package memory
