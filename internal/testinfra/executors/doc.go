// Package executors lists, for scenario tests, the executors agent code
// runs on: goja in the test's process, and the isolated executor whose
// sandbox child is the test binary itself (the kernel server's production
// executor). A test package names one environment variable, calls
// isolated.ServeChildIf with it from TestMain, and ranges over All.
package executors
