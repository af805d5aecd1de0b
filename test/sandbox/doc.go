// Package sandbox drives a kernel server against the bounds it keeps on
// agent code, on both executors: an agent plugin's slow host call ends at
// the plugin's deadline or when its client leaves, without holding up other
// callers' submissions; and the isolated executor refuses a mount past its
// bounds on sandbox processes, with a verdict that names the bound.
package sandbox
