// Package collections is the system plugin that stores records for other
// plugins: a plugin contributes a collection {name, fields} and gets a table
// c_<name> in the tenant's database, a REST API under /api/collections/:name
// and a service (the collections key) that Go code calls directly and agent
// code calls with cap.invoke('collections', method, ...args).
//
// Three points feed it: collection (a collection and its fields),
// collection-field (one more field for a collection defined elsewhere) and
// collection-hook (a function run before or after a create, update or
// delete). All three are open to agent plugins; the collections key is
// provided only by system fibers and may be read and invoked by agent ones.
//
// Invariants:
//   - migrations are additive: a contribution creates a missing table or
//     adds a missing column (filling the rows already there with the
//     field's default), and nothing ever drops or alters a table or column,
//     so withdrawing a collection or field and contributing it again loses
//     no data; a withdrawn collection answers not found until it returns;
//   - a contribution whose migration fails is rejected, failing the plugin
//     that made it; a failed migration of a contribution that predates this
//     plugin's activation is logged and retried on the next call;
//   - one live definition per collection name and per field of a
//     collection; a clashing contribution is rejected and names the owner;
//   - every value is bound as a ? argument and checked against its field's
//     type first; every identifier is a checked, quoted name;
//   - errors the caller can act on wrap ErrInvalid, ErrNotFound or
//     ErrRejected and name the collection and field; over REST they are
//     400 validation and 404 not_found;
//   - a failing before hook rejects the write before anything is written;
//     after hooks run once the write is committed and their failures are
//     logged, never undoing the write; hooks whose writes trigger hooks stop
//     at MaxHookDepth levels.
//
// Collections are not a profile over the ORM (plugins/orm), and that is
// deliberate. A collection is the small store: no relations, no record
// rules and no guard, where every ORM call that is not sudo asks the guard;
// a profile would have to switch that invariant off. Its tables (c_<name>)
// and its REST and invoke contract are what agent plugins already call, and
// the ORM would have to adopt those tables to serve them. What the two share
// lives below both: kernel.ItemAs and kernel.DecodeItem read contributions,
// contracts.Database and contracts.Dialect run the SQL, plugins/http serves
// REST. Application data belongs in the ORM; collections take no new
// features.
package collections
