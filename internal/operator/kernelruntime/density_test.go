package kernelruntime

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	smsv1 "github.com/sms-baseline/sms/api/v1"
)

// BenchmarkLocalTenantDensity boots 50 idle tenants with the local runtime
// (kernels in this process, SQLite each, no agent plugin) and reports what
// each adds to the process's resident set (rss-per-tenant-MB; its
// anonymous part, anon-per-tenant-MB, is what no other process shares) and
// how many such tenants fit in 24 GiB (tenants-per-24GiB, by RSS).
//
//	go test -run '^$' -bench LocalTenantDensity -benchtime 1x -count 3 ./internal/operator/kernelruntime/
func BenchmarkLocalTenantDensity(b *testing.B) {
	const tenants = 50
	for range b.N {
		l := NewLocal(LocalOptions{Dir: b.TempDir(), Executor: "goja"})
		before := selfMem(b)
		for i := range tenants {
			t := &smsv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("t%02d", i), Namespace: "density"}}
			if _, err := l.Ensure(context.Background(), Spec{Tenant: t, AdminToken: "density-token"}); err != nil {
				b.Fatal(err)
			}
		}
		time.Sleep(time.Second)
		runtime.GC()
		after := selfMem(b)
		rss := (after.rss - before.rss) / tenants
		b.ReportMetric(rss, "rss-per-tenant-MB")
		b.ReportMetric((after.anon-before.anon)/tenants, "anon-per-tenant-MB")
		b.ReportMetric(24*1024/rss, "tenants-per-24GiB")
		l.Close()
	}
}

type procMem struct{ rss, anon float64 }

// selfMem reads this process's resident and anonymous set sizes in MB.
func selfMem(tb testing.TB) procMem {
	tb.Helper()
	f, err := os.Open("/proc/self/smaps_rollup")
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var m procMem
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		kb, err := strconv.ParseFloat(fields[1], 64)
		if err != nil {
			continue
		}
		switch fields[0] {
		case "Rss:":
			m.rss = kb / 1024
		case "Anonymous:":
			m.anon = kb / 1024
		}
	}
	return m
}
