// Package orm drives the ORM end to end: a real kernel server on a SQLite
// file, the goja executor and the scripted model, over the admin API, the
// way a user asks the agent to change an application's data model.
package orm
