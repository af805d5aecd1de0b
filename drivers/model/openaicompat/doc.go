// Package openaicompat is the model driver for Chat Completions endpoints
// (OpenRouter, Ollama, vLLM and others reached through a base URL).
//
// Tools are sent as function tools, tool_result blocks become role "tool"
// messages, and a streamed tool call's argument deltas are assembled into
// one whole tool_use event. The key and base URL are always passed
// explicitly; rate limits and server errors are retried by the client.
//
// Driver describes it to a driver registry as "openaicompat": it needs a
// model name and a base URL; its key (OPENROUTER_API_KEY, OPENAI_API_KEY)
// is optional, and NoKey is sent without one.
package openaicompat
