// Package agentloop is the chat agent: a system plugin that runs a model in
// a tool-use loop. It injects the model and the judge, provides the agent
// Service under Key, and defines the tool and prompt points, open to agent
// plugins, so a plugin the agent defines can give the agent new tools.
//
// Invariants:
//   - a tool's input is checked against its input_schema before the handler
//     runs; a bad input or a failing handler is an is_error tool result the
//     model sees, never a failed turn;
//   - turns of one session run one after another, and a turn that fails
//     leaves the session's history as it was;
//   - a turn makes at most MaxSteps model calls;
//   - every finished turn appends a chat/turn audit event;
//   - the agent defines plugins only through the judge, and enables or
//     disables agent plugins only;
//   - the agent acts as its user: a built-in tool needs the scope its admin
//     API route needs, from the chat request's principal, and a caller
//     without the admin scope cannot undo an admin's disable (its own
//     disables are reversible, kernel.DisableReversibly).
package agentloop
