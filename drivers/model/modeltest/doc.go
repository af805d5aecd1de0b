// Package modeltest is the conformance suite every model driver runs from
// its own tests, in the spirit of testing/fstest.TestFS. Run gives the
// driver's factory the turns the model must answer with; a driver for an
// HTTP API serves them from a local fake server in its wire format, so the
// suite runs offline.
package modeltest
