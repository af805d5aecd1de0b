// Package anthropic is the model driver for the Anthropic Messages API.
//
// New returns a contracts.ModelService that also implements
// contracts.ModelStreamer. Every request carries the tenant's key and base
// URL explicitly, so the process environment never chooses either. Rate
// limits and server errors are retried by the client with backoff that
// honours Retry-After; an error body delivered with HTTP 200 is returned as
// an error; a cancelled context yields an error wrapping context.Canceled.
//
// Driver describes it to a driver registry as "anthropic": it needs a
// model name and a key (ANTHROPIC_API_KEY).
package anthropic
