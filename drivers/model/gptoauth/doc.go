// Package gptoauth is the unofficial gpt-oauth model driver, for one
// person's own kernel: it sends the agent's turns to ChatGPT's Codex
// backend (the undocumented, Responses-shaped, streaming endpoint the
// codex CLI uses) with the OAuth tokens `codex login` keeps in auth.json,
// refreshing them before they expire and once more when the backend
// answers 401, and writing the refreshed tokens back with 0600
// permissions.
//
// It must be allowed explicitly (Options.Unofficial,
// --allow-unofficial-gpt-oauth): the endpoint may change without notice,
// and the tokens are one person's subscription, never to be shared or put
// behind a service others use. The operator does not offer it to Tenants.
package gptoauth
