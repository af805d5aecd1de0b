// Package console tests the console page in a real browser: headless
// Chromium from Debian's packages (hack/chromium.sh installs it), driven
// over the DevTools protocol with chromedp. Each step saves a screenshot
// in the test's artifact directory (go test -artifacts -outputdir DIR).
package console
