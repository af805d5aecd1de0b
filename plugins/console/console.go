package console

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/sms-baseline/sms/kernel"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// PluginID is the id of the console system plugin.
const PluginID = "sms.console"

// Path is where the page is served; its assets are under it.
const Path = "/console"

// Policy is the page's Content-Security-Policy: the kernel's own origin
// for scripts, styles, images and connections, nothing inline, no eval,
// no framing, forms posting nowhere but here.
const Policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'none'; require-trusted-types-for 'script'; trusted-types 'none'"

//go:embed assets
var assets embed.FS

// Assets are the page's files, for tests and for an application that
// serves a restyled copy.
func Assets() fs.FS { return assets }

// files are the assets by the path they are served at, with their type.
var files = []struct{ path, file, typ string }{
	{Path, "assets/index.html", "text/html; charset=utf-8"},
	{Path + "/lib.js", "assets/lib.js", "text/javascript; charset=utf-8"},
	{Path + "/console.js", "assets/console.js", "text/javascript; charset=utf-8"},
	{Path + "/console.css", "assets/console.css", "text/css; charset=utf-8"},
}

// Options configure the console.
type Options struct {
	// CSS is appended to the page's stylesheet: an application restyles
	// the console with it (its colours are CSS variables on :root). It is
	// served from the kernel like the rest, so the policy holds.
	CSS []byte
}

// Plugin returns the console system plugin. It reserves Path and serves
// the page there on every listener.
func Plugin(opts Options) kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: PluginID, Version: "1", Inject: []string{smshttp.Key},
			Points:      []string{smshttp.RoutePoint, smshttp.ReservedPoint},
			Description: "A page in the browser: chat with the agent, the plugins, what waits for a human, the event log"},
		Activate: func(_ context.Context, c *kernel.Context) error { return activate(c, opts) },
	}
}

func activate(c *kernel.Context, opts Options) error {
	if _, err := c.Contribute(smshttp.ReservedPoint, Path); err != nil {
		return err
	}
	var errs []error
	for _, f := range files {
		body, err := assets.ReadFile(f.file)
		if err != nil {
			return fmt.Errorf("console: %w", err)
		}
		if f.path == Path+"/console.css" && len(opts.CSS) > 0 {
			body = append(append(body, '\n'), opts.CSS...)
		}
		_, err = c.Contribute(smshttp.RoutePoint, smshttp.Route{Method: http.MethodGet, Path: f.path, Handler: serve(body, f.typ, f.path == Path)})
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Headers are the headers of every answer the console serves.
func Headers(typ string) map[string]string {
	return map[string]string{
		"Content-Type":               typ,
		"Content-Security-Policy":    Policy,
		"X-Content-Type-Options":     "nosniff",
		"X-Frame-Options":            "DENY",
		"Referrer-Policy":            "no-referrer",
		"Cross-Origin-Opener-Policy": "same-origin",
		"Cache-Control":              "no-cache",
	}
}

// serve answers with body as typ. The page is the same for everyone, so
// it needs no credential; the routes it calls do. The page's links are
// relative to Path, so Path with a trailing slash (which the router
// serves as Path) is sent to Path.
func serve(body []byte, typ string, index bool) smshttp.Handler {
	return func(_ context.Context, r *smshttp.Request) (*smshttp.Response, error) {
		if r.Raw != nil && index && strings.HasSuffix(r.Raw.URL.Path, "/") {
			return &smshttp.Response{Status: http.StatusPermanentRedirect, Headers: map[string]string{"Location": "../" + path.Base(Path)}}, nil
		}
		return &smshttp.Response{Headers: Headers(typ), Body: string(body)}, nil
	}
}
