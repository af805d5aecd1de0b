package console

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium finds the browser: SMS_CHROMIUM, else Debian's. Without one
// the test skips, unless SMS_REQUIRE_BROWSER=1 (make test) makes that a
// failure naming the package to install.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("SMS_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	msg := "no Chromium: install Debian's chromium package (hack/chromium.sh, as root) or set SMS_CHROMIUM"
	if os.Getenv("SMS_REQUIRE_BROWSER") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// browser is a headless Chromium tab for t, closed when t ends.
type browser struct {
	t    *testing.T
	ctx  context.Context
	shot int
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)), chromedp.NoSandbox, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.WindowSize(1280, 900))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	return &browser{t: t, ctx: ctx}
}

// run runs steps, failing the test with step's name.
func (b *browser) run(step string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", step, err)
	}
}

// css is a CSS selector.
func css(sel string) chromedp.CSS { return chromedp.CSS(sel) }

// screenshot saves the page as the next numbered step in the test's
// artifact directory.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	b.shot++
	path := filepath.Join(b.t.ArtifactDir(), fmt.Sprintf("%02d-%s.png", b.shot, name))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// text returns the text of the first element sel matches, once visible.
func (b *browser) text(sel string) string {
	b.t.Helper()
	b.run("wait for "+sel, chromedp.WaitVisible(css(sel)))
	s, err := chromedp.Run(b.ctx, chromedp.TextContent(css(sel)))
	if err != nil {
		b.t.Fatalf("read %s: %v", sel, err)
	}
	return s
}

// waitText waits until an element sel matches holds want.
func (b *browser) waitText(sel, want string) {
	b.t.Helper()
	js := fmt.Sprintf(`[...document.querySelectorAll(%q)].some(e => e.textContent.includes(%q))`, sel, want)
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		b.t.Fatalf("wait for %q in %s: %v", want, sel, err)
	}
}

// count is how many elements sel matches.
func (b *browser) count(sel string) int {
	b.t.Helper()
	n, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)))
	if err != nil {
		b.t.Fatalf("count %s: %v", sel, err)
	}
	return n
}

// eval evaluates js in the page.
func (b *browser) eval(js string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", js, err)
	}
	return s
}

// login signs in through the page's form.
func (b *browser) login(base, login, password string) {
	b.t.Helper()
	b.run("sign in as "+login,
		chromedp.Navigate(base+"/console"),
		chromedp.WaitVisible(css(`#login input[name=login]`)),
		chromedp.SendKeys(css(`#login input[name=login]`), login),
		chromedp.SendKeys(css(`#login input[name=password]`), password),
		chromedp.Click(css(`#login button`)),
		chromedp.WaitVisible(css(`#ask textarea`)))
}

// ask sends text to the agent and waits for the turn to end with want.
func (b *browser) ask(text, want string) {
	b.t.Helper()
	b.run("ask "+text, chromedp.SendKeys(css(`#ask textarea`), text), chromedp.Click(css(`#ask button`)))
	b.waitText(`#transcript li.agent`, want)
}

// click clicks the first element sel matches.
func (b *browser) click(sel string) {
	b.t.Helper()
	b.run("click "+sel, chromedp.Click(css(sel)))
}

// tab opens one of the page's tabs.
func (b *browser) tab(name string) {
	b.t.Helper()
	b.run("open "+name, chromedp.Click(css(`nav button[data-tab=`+name+`]`)), chromedp.WaitVisible(css(`#`+name)))
}
