// Package console is the console system plugin: one page, served by the
// kernel under Path, for the people who ask the agent for changes.
//
// The page chats with the agent (streaming each tool call and verdict as
// it arrives), lists the plugins live from the event stream with their
// code, versions and a diff between them, shows what waits for a human
// and why, and the kernel's event log. It is plain HTML, CSS and
// JavaScript embedded in the binary: no build step, no third-party
// origin.
//
// The console adds no access path of its own. Its routes serve only the
// static page, to anyone; everything the page shows or does goes through
// the admin API and the auth plugin's routes, which check the caller as
// they do for any client (a session cookie, or a bearer token the person
// pastes, kept in the tab's sessionStorage). The page is served with a
// Content-Security-Policy that allows scripts, styles and connections to
// the kernel's own origin only, no inline script or eval, and no framing;
// every text that comes from the kernel (plugin ids, reasons, code, chat)
// is put into the page as text, never as HTML.
package console
