// Package audit is the audit system plugin: a message thread, followers
// and activities on any ORM record, and tracked fields whose changes post
// themselves.
//
// The audit key (system only) posts a message on a record; the audit-track
// point (open to agent plugins) lists fields of a model whose changes
// become tracking messages that show the old and the new value. The plugin
// declares three models, audit_message, audit_activity and audit_follower,
// and is the one writer of messages and followers: the service checks that
// the caller may read the record, then writes as sudo, so the ORM's
// created_by names the author. Unlinking a record unlinks its messages,
// activities and followers once the unlink commits.
//
// Routes under /api/audit act for the caller: a record's thread is served
// to whoever may read the record, and activities to whom they are
// assigned. With Options.Group the plugin also contributes the rbac access
// rows of that group to its models and the "own activities" rule; without
// it, under rbac the models are closed to the ORM's own routes.
package audit
