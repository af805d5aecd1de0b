// Package operator assembles the sms operator: a controller-runtime
// manager with the sms.dev controllers, the admission webhooks, health
// and metrics endpoints, leader election, and a kernel runtime
// (kubernetes or local). `manager operator`, `manager dev` and the
// envtest suites all start it through New, so they run the same wiring.
package operator
