package e2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
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
		var child mem
		for _, pid := range children {
			m := memOf(b, pid)
			child.rss += m.rss
			child.pss += m.pss
			child.anon += m.anon
		}
		n := float64(len(children))
		perKernel := (busy.pss - idle.pss) / plugins
		b.ReportMetric(idle.rss, "idle-rss-MB")
		b.ReportMetric(idle.pss, "idle-pss-MB")
		b.ReportMetric(idle.anon, "idle-anon-MB")
		b.ReportMetric(perKernel, "kernel-per-plugin-MB")
		b.ReportMetric(child.rss/n, "child-rss-MB")
		b.ReportMetric(child.pss/n, "child-pss-MB")
		b.ReportMetric(child.anon/n, "child-anon-MB")
		k.stop()
	}
}

// mem is a process's resident, proportional and anonymous (its own heap
// and stacks, shared with nobody) set sizes, in MB.
type mem struct{ rss, pss, anon float64 }

// memOf reads /proc/pid/smaps_rollup.
func memOf(tb testing.TB, pid int) mem {
	tb.Helper()
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "smaps_rollup"))
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var m mem
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
		case "Pss:":
			m.pss = kb / 1024
		case "Anonymous:":
			m.anon = kb / 1024
		}
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
