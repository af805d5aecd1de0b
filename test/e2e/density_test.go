package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sms-baseline/sms/internal/testinfra/procmem"
)

// BenchmarkKernelMemory measures what one tenant's kernel holds in memory:
// `manager kernel` with the isolated executor, idle with no agent plugin,
// then with 10 agent plugins (a route each) mounted, each in its sandbox
// child. It reports
// resident (RSS) and proportional (PSS, which splits pages shared between
// processes, such as the binary's, among them) set sizes:
//
//   - idle-rss-MB, idle-pss-MB, idle-anon-MB: the idle kernel (it has no
//     children); anon is what is its own, the rest the binary's pages;
//   - kernel-per-plugin-MB: the kernel process's own growth (PSS) per
//     plugin, within the noise of its garbage collector;
//   - child-rss-MB, child-pss-MB, child-anon-MB: one sandbox child,
//     averaged: what each mounted agent plugin costs.
//
// Children started ahead of need (the warm pool) are sandbox children too;
// they are counted in the child averages and not in the per-plugin growth.
//
//	go test -run '^$' -bench KernelMemory -benchtime 1x -count 3 ./test/e2e/
func BenchmarkKernelMemory(b *testing.B) {
	const plugins = 10
	for range b.N {
		k := start(b, kernelArgs(b, "--executor", "isolated", "--auto-approve")...)
		time.Sleep(time.Second) // let start-up garbage be collected
		idle := memOf(b, k.cmd.Process.Pid)
		for i := range plugins {
			code := fmt.Sprintf(`export default async function activate(cap) {
  await cap.contribute('route', { method: 'GET', path: '/m%d', handler: async () => ({ body: { ok: %d } }) });
}`, i, i)
			if r := k.do(call{"POST", "/api/plugins", token, plugin(fmt.Sprintf("agent.m%d", i), code)}); r.str("status") != "mounted" {
				b.Fatalf("submit plugin %d: %d %s", i, r.status, r.text)
			}
		}
		time.Sleep(time.Second)
		busy := memOf(b, k.cmd.Process.Pid)
		children := childrenOf(b, k.cmd.Process.Pid)
		if len(children) < plugins {
			b.Fatalf("sandbox children: got %d, want at least %d", len(children), plugins)
		}
		var child procmem.Mem
		for _, pid := range children {
			m := memOf(b, pid)
			child.RSS += m.RSS
			child.PSS += m.PSS
			child.Anon += m.Anon
		}
		n := float64(len(children))
		perKernel := (busy.PSS - idle.PSS) / plugins
		b.ReportMetric(idle.RSS, "idle-rss-MB")
		b.ReportMetric(idle.PSS, "idle-pss-MB")
		b.ReportMetric(idle.Anon, "idle-anon-MB")
		b.ReportMetric(perKernel, "kernel-per-plugin-MB")
		b.ReportMetric(child.RSS/n, "child-rss-MB")
		b.ReportMetric(child.PSS/n, "child-pss-MB")
		b.ReportMetric(child.Anon/n, "child-anon-MB")
		k.stop()
	}
}

// memOf reads process pid's memory.
func memOf(tb testing.TB, pid int) procmem.Mem {
	tb.Helper()
	m, err := procmem.Of(strconv.Itoa(pid))
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// childrenOf returns the pids whose parent is pid.
func childrenOf(tb testing.TB, pid int) []int {
	tb.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		tb.Fatal(err)
	}
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The fields after the command, which is in parentheses: state, ppid.
		rest := string(raw[strings.LastIndexByte(string(raw), ')')+1:])
		fields := strings.Fields(rest)
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}
