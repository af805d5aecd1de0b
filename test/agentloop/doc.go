// Package agentloop drives the chat agent end to end: a real kernel
// with the scripted model and the goja executor, over the admin API.
package agentloop
