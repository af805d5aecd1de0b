// Package kernel is ring 0 of sms: the plugin kernel every other package stands on.
//
// A kernel holds three registries and reconciles a set of fibers against them:
//
//   - keys: name -> value, provided by exactly one fiber at a time, with KeyMeta
//     saying the least trust a provider and a consumer need;
//   - points: name -> ordered contributions, with PointMeta saying the least trust
//     a contributor needs and how an item is validated; observers see every
//     contribution as Added and, on undo, as the exact inverse Removed;
//   - fibers: one per installed plugin, with its manifest, trust tier, enabled
//     flag, lifecycle state and the effects its activation applied.
//
// A fiber moves inactive -> loading -> active -> unloading -> inactive, or
// loading -> failed. Activation applies the manifest's declarative contributes
// first, then runs the plugin's activate code: in process for system plugins,
// through an Executor for agent plugins. Every provide and contribute records an
// effect together with its inverse, so nobody writes teardown: deactivation and
// failed activations undo what ran, in reverse order.
//
// Settle is the reconciler: an enabled fiber whose injected keys are all
// provided is activated; a disabled fiber is deactivated. A provider outlives
// its consumers: deactivating a fiber first deactivates every active fiber that
// injects one of its keys, recursively. Settle does work proportional to the
// fibers and dependency edges it touches.
//
// Invariants the kernel keeps:
//
//   - trust is checked on every get, provide and contribute; an agent fiber never
//     holds the system-only API (no *API is ever handed to agent code);
//   - declared, then enforced: an agent fiber reads only the keys its manifest
//     injects or lists as optional, provides only those it declares, and
//     contributes only to the points it declares, on every call and after a
//     restore;
//   - an agent plugin mounts only with a single-use MountAuthorization minted by
//     Authorize for its exact id, version, code hash and declaration, and may
//     never take the id of a system fiber;
//   - a mount is atomic: Propose stages it and only Commit records it as
//     mounted, so a restart finds every plugin fully mounted or absent;
//   - Restore mounts only what was committed: an agent install without a
//     plugin/mounted (written by hand, or before commits existed) needs a
//     RestoreGuard's word, any guard may refuse a plugin, and what is left
//     out is reported (plugin/restore_refused, a log line, a taint flag);
//   - a disable holds unless it was made reversibly (DisableReversibly),
//     EnableReversible never undoes one that holds, and a version proposed
//     after it installs disabled and held until Enable;
//   - system plugins stay enabled: Disable refuses them, and a log that says
//     otherwise taints the kernel instead of stopping it from booting;
//   - the event log is the source of truth: plugin/installed, plugin/mounted,
//     plugin/aborted, plugin/enabled, plugin/disabled and plugin/uninstalled
//     fold into the target state that Restore re-creates; code lives in a
//     content-addressed blob store;
//   - taint flags are sticky: once something unusual happened (a forced
//     uninstall, a trust-escalation attempt, a rollback, an auto-approval, an
//     undo that failed, a log disabling a system plugin, a plugin restore
//     refused) the flag stays for the
//     kernel's lifetime and is attached to every error the kernel returns and
//     to its state view.
//
// The package imports the standard library only.
package kernel
