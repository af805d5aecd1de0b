package pgtest

import (
	"strings"
	"testing"
)

// recorder stands in for a test so that AdminURL's skip and failure can be
// observed instead of ending this test.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                        {}
func (r *recorder) Skipf(format string, _ ...any)  { r.skipped = format }
func (r *recorder) Fatalf(format string, _ ...any) { r.failed = format }

// A missing server skips, unless EnvRequire is set: then it fails, so CI
// cannot pass without running the Postgres tests. Seen failing with the
// EnvRequire branch removed from AdminURL.
func TestAdminURL(t *testing.T) {
	tests := []struct {
		name, url, require string
		wantURL            string
		wantSkip, wantFail bool
	}{
		{name: "server given", url: "postgres://x@127.0.0.1:1/postgres", wantURL: "postgres://x@127.0.0.1:1/postgres"},
		{name: "server given and required", url: "postgres://y@127.0.0.1:1/postgres", require: "1", wantURL: "postgres://y@127.0.0.1:1/postgres"},
		{name: "no server", wantSkip: true},
		{name: "no server but required", require: "1", wantFail: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvURL, tc.url)
			t.Setenv(EnvRequire, tc.require)
			r := &recorder{TB: t}
			got := AdminURL(r)
			if got != tc.wantURL || (r.skipped != "") != tc.wantSkip || (r.failed != "") != tc.wantFail {
				t.Errorf("got url %q, skipped %q, failed %q; want url %q, skip %v, fail %v",
					got, r.skipped, r.failed, tc.wantURL, tc.wantSkip, tc.wantFail)
			}
			if tc.wantFail && !strings.Contains(r.failed, "hack/postgres.sh start") {
				t.Errorf("failure message: got %q, want it to say how to start a server", r.failed)
			}
		})
	}
}
