package kernelcmd

import (
	"os"
	"syscall"
)

// FaultEnv names the environment variable that arms a fault point: when
// the kernel reaches the point it names (kernel.FaultPoints,
// judge.FaultPoints), the process kills itself with SIGKILL, as a crash or
// an OOM kill would. The end-to-end tests use it to show that a mount is
// crash-atomic. Unset, it costs nothing.
const FaultEnv = "SMS_FAULT_POINT"

// faultHook returns the kernel's fault hook for the armed point, or nil.
func faultHook() func(string) {
	armed := os.Getenv(FaultEnv)
	if armed == "" {
		return nil
	}
	return func(point string) {
		if point == armed {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way; go no further
		}
	}
}
