package local

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/internal/operator/kernelruntime"
	"github.com/sms-baseline/sms/internal/testinfra/procmem"
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
		l := New(Options{Dir: b.TempDir(), Executor: "goja"})
		before := selfMem(b)
		for i := range tenants {
			t := &smsv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("t%02d", i), Namespace: "density"}}
			if _, err := l.Ensure(context.Background(), kernelruntime.Spec{Tenant: t, AdminToken: "density-token"}); err != nil {
				b.Fatal(err)
			}
		}
		time.Sleep(time.Second)
		runtime.GC()
		after := selfMem(b)
		rss := (after.RSS - before.RSS) / tenants
		b.ReportMetric(rss, "rss-per-tenant-MB")
		b.ReportMetric((after.Anon-before.Anon)/tenants, "anon-per-tenant-MB")
		b.ReportMetric(24*1024/rss, "tenants-per-24GiB")
		l.Close()
	}
}

func selfMem(tb testing.TB) procmem.Mem {
	tb.Helper()
	m, err := procmem.Of("self")
	if err != nil {
		tb.Fatal(err)
	}
	return m
}
