package procmem

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Mem is a process's resident (RSS), proportional (PSS, which divides the
// pages processes share among them) and anonymous (its own heap and
// stacks) set sizes, in MB.
type Mem struct{ RSS, PSS, Anon float64 }

// Of reads process pid; "self" reads the calling process.
func Of(pid string) (Mem, error) {
	f, err := os.Open("/proc/" + pid + "/smaps_rollup")
	if err != nil {
		return Mem{}, fmt.Errorf("memory of process %s: %w", pid, err)
	}
	defer func() { _ = f.Close() }()
	var m Mem
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
			m.RSS = kb / 1024
		case "Pss:":
			m.PSS = kb / 1024
		case "Anonymous:":
			m.Anon = kb / 1024
		}
	}
	return m, sc.Err()
}
