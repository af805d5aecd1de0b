// Package rbac is the system plugin that decides what each user may do
// to the ORM's models and the collections: groups (with implied groups),
// access per group and model or collection, and record rules as ORM
// domains with $uid for the caller.
//
// Groups, access and rules come from system plugins' code (the group,
// access and rule points) and, for groups, access and membership, from
// data an admin changes over /api/auth/groups (rbac-admin). Every
// signed-in user is in the built-in group user; admin users and admin
// credentials are in admin, which may do everything to every model and
// collection (rules still apply).
//
// Invariants:
//   - the plugin is the ORM's and the collections' guard while it is
//     active, and the baseline makes both refuse everything but sudo while
//     it is not (RequireGuard): a broken rbac closes the data, never
//     opens it;
//   - an anonymous caller (no user, not admin) is refused every model and
//     every non-public collection; a model or collection no group of the
//     caller was granted is closed;
//   - a user reaches the union of their groups' access, narrowed by the
//     rules: the global rules of a model ANDed, and the group rules of the
//     user's groups ORed; sudo (system code) bypasses it all;
//   - no group implies itself, directly or through others: such a group,
//     from code or data, is refused whole;
//   - the plugin is the one writer of its tables; its policy and its
//     membership cache are rebuilt or dropped by the same calls that
//     change them, so a revoked right is gone for the next operation.
package rbac
