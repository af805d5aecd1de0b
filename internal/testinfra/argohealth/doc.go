// Package argohealth runs the Argo CD health checks the project ships
// (config/argocd/resource_customizations) the way Argo CD runs them: with
// gopher-lua, the object as the global obj, only the base, package and
// table libraries open, a one-second budget, and an answer that must be a
// table whose status is one of Argo CD's health codes. Tests use it on
// objects the real controllers produced and on the recorded fixtures.
package argohealth
