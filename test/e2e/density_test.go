package e2e

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sms-baseline/sms/internal/testinfra/procmem"
)

// BenchmarkKernelMemory measures what one tenant's kernel holds in memory:
// `sms-kernel kernel` (the image's kernel binary) with the isolated
// executor, idle with no agent plugin, then with 50 idle agent plugins (a
// route each) mounted. Each plugin's sandbox child (`sms-sandbox`) exits
// once the plugin has been idle for --sandbox-idle (here 2 s) and starts
// again on its next call. It reports resident (RSS) and proportional (PSS,
// which splits pages shared between processes, such as a binary's, among
// them) set sizes:
//
//   - idle-rss-MB, idle-pss-MB, idle-anon-MB: the idle kernel; anon is
//     what is its own, the rest the binary's pages;
//
//   - plugin-rss-MB, plugin-pss-MB: what each idle agent plugin adds to
//     the kernel's processes (the kernel and its plugins' children, as a
//     pod's memory counts them) once the children have idled out;
//
//   - warm-rss-MB: the warm pool's children (two, started ahead of the
//     next submission; they exit a minute after the last one), together;
//
//   - child-rss-MB, child-pss-MB: the largest child once a plugin woke
//     (its child has compiled and activated the plugin);
//
//   - wake-ms: a request to a sleeping plugin's route, which starts its
//     child and replays its activation;
//
//   - ready-s: a restart of the kernel with the 50 plugins, from exec to
//     /readyz answering 200 (restore included).
//
//     go test -run '^$' -bench KernelMemory -benchtime 1x -count 1 ./test/e2e/
func BenchmarkKernelMemory(b *testing.B) {
	const plugins = 50
	for range b.N {
		k := &kernelProc{t: b, addr: freeAddrs(b, 1)[0], log: &bytes.Buffer{},
			args: kernelArgs(b, "--executor", "isolated", "--auto-approve", "--sandbox-idle", "2s")}
		k.url = "http://" + k.addr
		k.launch(kernelBin)
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
		waitChildren(b, k, 2) // the plugins' children have exited; the warm pool's stay
		kernel, warm := podMem(b, k.cmd.Process.Pid)
		b.ReportMetric(idle.RSS, "idle-rss-MB")
		b.ReportMetric(idle.PSS, "idle-pss-MB")
		b.ReportMetric(idle.Anon, "idle-anon-MB")
		b.ReportMetric((kernel.RSS-idle.RSS)/plugins, "plugin-rss-MB")
		b.ReportMetric((kernel.PSS-idle.PSS)/plugins, "plugin-pss-MB")
		var pool procmem.Mem
		for _, m := range warm {
			pool.RSS += m.RSS
		}
		b.ReportMetric(pool.RSS, "warm-rss-MB")
		began := time.Now()
		if r := k.do(call{"GET", "/m7", "", nil}); r.status != 200 {
			b.Fatalf("GET /m7 of a sleeping plugin: %d %s", r.status, r.text)
		}
		b.ReportMetric(float64(time.Since(began).Microseconds())/1000, "wake-ms")
		_, awake := podMem(b, k.cmd.Process.Pid)
		child := slices.MaxFunc(awake, func(x, y procmem.Mem) int { return cmp.Compare(x.RSS, y.RSS) })
		b.ReportMetric(child.RSS, "child-rss-MB")
		b.ReportMetric(child.PSS, "child-pss-MB")
		k.stop()
		began = time.Now()
		k.launch(kernelBin)
		for k.do(call{"GET", "/readyz", "", nil}).status != 200 {
			time.Sleep(10 * time.Millisecond)
		}
		b.ReportMetric(time.Since(began).Seconds(), "ready-s")
		if r := k.do(call{"GET", fmt.Sprintf("/m%d", plugins-1), "", nil}); r.status != 200 {
			b.Fatalf("GET /m%d after the restart: %d %s", plugins-1, r.status, r.text)
		}
		k.stop()
	}
}

// waitChildren waits until k's process has at most n children, and a
// second more for its garbage to be collected.
func waitChildren(b *testing.B, k *kernelProc, n int) {
	b.Helper()
	// The guard only keeps a kernel whose children never exit from
	// hanging the benchmark.
	for guard := time.Now().Add(time.Minute); len(childrenOf(b, k.cmd.Process.Pid)) > n; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(guard) {
			b.Fatalf("the kernel still has %d children, want at most %d", len(childrenOf(b, k.cmd.Process.Pid)), n)
		}
	}
	time.Sleep(time.Second)
}

// podMem returns the memory of pid and its children together, as a pod
// counts them, and each child's.
func podMem(tb testing.TB, pid int) (procmem.Mem, []procmem.Mem) {
	tb.Helper()
	total := memOf(tb, pid)
	var children []procmem.Mem
	for _, c := range childrenOf(tb, pid) {
		m := memOf(tb, c)
		children = append(children, m)
		total.RSS, total.PSS, total.Anon = total.RSS+m.RSS, total.PSS+m.PSS, total.Anon+m.Anon
	}
	return total, children
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
