package console_test

import (
	"context"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/console"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

func serve(t *testing.T) http.Handler {
	t.Helper()
	k := kernel.New(kernel.Options{Name: "test"})
	for _, p := range []kernel.Plugin{smshttp.Plugin(smshttp.Options{Credentials: []smshttp.Credential{{Name: "a", Token: "t", Scopes: smshttp.Scopes}}}), console.Plugin(console.Options{CSS: []byte(".restyled { color: red }")})} {
		if err := k.Install(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.Restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	h, err := k.GetValue(smshttp.Key)
	if err != nil {
		t.Fatal(err)
	}
	return h.(http.Handler)
}

// The page and its assets are served to anyone (they hold no data) with
// the policy: scripts, styles and connections from the kernel's origin
// only, nothing inline, no framing. Seen failing with the headers left
// off the assets.
func TestPageHeaders(t *testing.T) {
	h := serve(t)
	for path, typ := range map[string]string{"/console": "text/html", "/console/console.js": "text/javascript", "/console/lib.js": "text/javascript", "/console/console.css": "text/css"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), typ) {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Header().Get("Content-Type"))
		}
		csp := rec.Header().Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'", "connect-src 'self'"} {
			if !strings.Contains(csp, want) {
				t.Fatalf("GET %s: the policy %q lacks %q", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-") || strings.Contains(csp, "http") {
			t.Fatalf("GET %s: the policy %q allows inline code or another origin", path, csp)
		}
		if path == "/console/console.css" && !strings.Contains(rec.Body.String(), ".restyled { color: red }") {
			t.Fatalf("the application's CSS is not appended to the stylesheet")
		}
		if rec.Header().Get("X-Content-Type-Options") != "nosniff" || rec.Header().Get("X-Frame-Options") != "DENY" {
			t.Fatalf("GET %s: headers %v", path, rec.Header())
		}
	}
}

// /console/ (which the router serves as /console) is sent to /console, so
// the page's relative links resolve. Seen failing without the redirect
// (the page loaded without its script, and its forms would have sent the
// password in the URL).
func TestTrailingSlashRedirects(t *testing.T) {
	rec := httptest.NewRecorder()
	serve(t).ServeHTTP(rec, httptest.NewRequest("GET", "/console/", nil))
	if rec.Code != http.StatusPermanentRedirect || rec.Header().Get("Location") != "../console" {
		t.Fatalf("GET /console/: %d %v", rec.Code, rec.Header())
	}
}

// The assets need nothing the policy forbids: no inline script or style,
// no event handler attribute, no third-party URL, no eval or HTML
// assembled from strings. Seen failing with an onclick attribute in the
// page.
func TestAssetsKeepToThePolicy(t *testing.T) {
	forbidden := []*regexp.Regexp{
		regexp.MustCompile(`<script>|<script [^>]*>[^<]`), regexp.MustCompile(`<style`), regexp.MustCompile(`\son[a-z]+=`),
		regexp.MustCompile(`style=`), regexp.MustCompile(`https?://`), regexp.MustCompile(`\beval\(|new Function|innerHTML|outerHTML|insertAdjacentHTML|document\.write`),
	}
	err := fs.WalkDir(console.Assets(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := fs.ReadFile(console.Assets(), path)
		if err != nil {
			return err
		}
		for _, re := range forbidden {
			if m := re.Find(raw); m != nil {
				t.Errorf("%s holds %q", path, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
