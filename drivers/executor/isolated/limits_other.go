//go:build !linux

package isolated

import (
	"errors"
	"runtime"
)

// applyLimits refuses to run: the sandbox's limits are implemented for Linux only.
func applyLimits(ChildOptions) error {
	return errors.New("the sandbox's OS limits are implemented for Linux only, not " + runtime.GOOS)
}
