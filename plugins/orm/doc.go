// Package orm is the system plugin that turns model declarations into
// tables, and the data layer an application (and the agent extending it)
// is built on: a plugin contributes a model {name, fields} and gets a
// table m_<name> in the tenant's database, relations between models,
// searches with domains, grouped reads, a REST API under /api/orm and two
// keys: orm (the Service, system only) and orm-user (the same operations
// for agent code, always acting as the user being served).
//
// Five points feed it: model, model-field (a field added to a model
// another plugin declares), model-method, model-hook and model-onchange.
// All five are open to agent plugins; the judge's default policy sends the
// last four to a human.
//
// Invariants:
//   - migrations are additive, on every boot and every accepted
//     contribution: a missing table, column or join table is created,
//     nothing is ever dropped or altered, so withdrawing a model or field
//     (disabling its plugin) and contributing it again loses no data; a
//     contribution is first tried in a transaction that is rolled back, so
//     a plugin the judge only tries changes nothing;
//   - the table orm_columns records which plugin made each table and
//     column and of which kind: no field reuses a kept column of another
//     storage class, and no agent plugin takes over a table or column
//     another plugin made; plugins never name tables (m_<name>, and join
//     tables hashed from model and field); a mount that rolls back takes
//     back the ownership its migration recorded;
//   - every value reaches SQL as a bound ? argument: domains, ids (one
//     JSON array argument), values and like patterns alike; the SQL text
//     holds only identifiers checked against the schema and quoted;
//   - domains give the same results on SQLite and Postgres: text compares
//     and sorts by bytes (COLLATE "C" on Postgres), like is case-sensitive
//     and ilike folds ASCII letters only on both, nulls sort first
//     ascending, dates and datetimes are fixed-width text;
//   - a Create, Write or Unlink with all its x2many commands and onDelete
//     cascades is one transaction: any failure leaves nothing applied.
//     The guard and before hooks run before the transaction starts (on
//     SQLite it holds the only connection); after hooks and listeners run
//     once it committed, and their failures never undo it;
//   - every operation that is not sudo asks the guard (Can) and narrows
//     itself with the guard's domain, including the models a dotted path
//     enters; sudo is set only by system Go code with Sudo(ctx);
//   - agent code never holds the orm key; orm-user, REST calls and agent
//     handlers act for the caller with sudo off, whatever called them; an
//     agent plugin's field on another plugin's model is never required and
//     never restricts or cascades, and its failing compute or onchange
//     does not break that model;
//   - a Read issues one query per model and relation level, whatever the
//     number of records (ids travel as one JSON array argument);
//   - every call is bounded before it touches the database (limits.go):
//     domain path hops and joins, compiled SQL, spec fields, an answer's
//     records and bytes, a write's join rows and rows, read_group's groupBy
//     and aggregates; reads in flight share one memory budget, and a read
//     that does not fit is refused at once, never made to wait; a path
//     compiles in time linear in its hops;
//   - every operation runs its statements with its ctx and checks it
//     between records and commands, so a caller's end rolls it back.
//
// Where things are, by concern:
//   - contract.go: the public types (models, fields, hooks, the Service,
//     the Guard); items.go reads contributed items into them;
//   - registry.go: live contributions by plugin; schema.go: the schema
//     built from them (models, fields, resolved relations and paths);
//   - migrate.go, meta.go, ownership.go: additive migrations and who owns
//     each table and column;
//   - domain.go parses domains; compile.go and paths.go compile them to
//     SQL; order.go parses and compiles orders;
//   - guard.go: the Guard adapter and how every call is narrowed by it;
//     guardwrite.go: the same checks inside a write;
//   - read.go, relations.go, group.go: reads; prepare.go, write.go,
//     commands.go, unlink.go: writes; hooks.go: hooks, methods, onchange;
//   - limits.go, budget.go, writebounds.go: the bounds;
//   - args.go decodes the arguments of agent calls (agent.go) and REST
//     bodies (rest.go); values.go converts values to and from columns.
package orm
