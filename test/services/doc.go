// Package services tests the application services (automation, audit,
// meta and rpc) on a real kernel server, with users and access control
// on, as an application runs them.
package services
