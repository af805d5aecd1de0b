// Package e2e holds black-box tests of the manager binary: each test builds
// it, starts `manager kernel` as a real process on a loopback port, and
// drives it over HTTP the way a user with curl would, restarting the
// process to prove what survives.
package e2e
