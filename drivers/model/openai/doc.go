// Package openai is the model driver for the OpenAI Responses API.
//
// Calls are stateless (store is off; the whole conversation is sent each
// time). Tools are function tools; tool_use blocks become function_call
// items and tool_result blocks function_call_output items. The key and base
// URL are always passed explicitly; rate limits and server errors are
// retried by the client with backoff that honours Retry-After.
//
// Driver describes it to a driver registry as "openai": it needs a model
// name and a key (OPENAI_API_KEY).
package openai
