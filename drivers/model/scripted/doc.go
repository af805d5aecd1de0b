// Package scripted is a model driver that replays canned turns in order,
// for tests and offline demos. Each call to Complete (or Stream) answers
// with the next turn; tool_use blocks get ids when the script has none, and
// the stop reason is tool_use when a turn calls a tool. A script that runs
// out answers with an error naming how many turns it had.
//
// Driver describes it to a driver registry as "scripted": it needs a
// script file and takes no key.
package scripted
