package isolated

import (
	"bufio"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// applyLimits sets the child's own RLIMIT_AS and RLIMIT_CPU.
//
// The address-space limit is the child's current mapping plus
// MemoryLimit: a Go process has reserved more than a gigabyte of address
// space before it allocates anything (the race detector, terabytes), so an
// absolute limit small enough to matter would stop the runtime itself. The
// Go heap's soft limit is set to half the headroom, so the collector works
// harder before an allocation fails. Past the limit an allocation fails and
// the Go runtime ends the process ("fatal error: runtime: out of memory").
//
// RLIMIT_CPU's soft limit raises SIGXCPU, which the child reports on stderr
// before exiting with ExitCPULimit; the hard limit, a second later, kills it.
func applyLimits(o ChildOptions) error {
	base, err := mappedBytes()
	if err != nil {
		return err
	}
	as := uint64(base) + uint64(o.MemoryLimit)
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: as, Max: as}); err != nil {
		return fmt.Errorf("set RLIMIT_AS to %d bytes: %w", as, err)
	}
	debug.SetMemoryLimit(o.MemoryLimit / 2)
	secs := uint64((o.CPULimit + time.Second - 1) / time.Second)
	xcpu := make(chan os.Signal, 1)
	signal.Notify(xcpu, syscall.SIGXCPU)
	go func() {
		<-xcpu
		_, _ = fmt.Fprintf(o.Stderr, "sandbox: the CPU time limit of %s was reached\n", o.CPULimit)
		o.Exit(ExitCPULimit)
	}()
	if err := syscall.Setrlimit(syscall.RLIMIT_CPU, &syscall.Rlimit{Cur: secs, Max: secs + 1}); err != nil {
		return fmt.Errorf("set RLIMIT_CPU to %ds: %w", secs, err)
	}
	return nil
}

// mappedBytes returns the process's current address-space size (VmSize).
func mappedBytes() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("read address-space size: %w", err)
	}
	defer func() { _ = f.Close() }()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmSize:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parse VmSize %q: %w", rest, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmSize in /proc/self/status")
}
