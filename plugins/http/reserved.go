package http

import (
	"fmt"
	"strings"
	"sync"
)

// reservations are the path prefixes reserved for system routes:
// DefaultReserved and the items of ReservedPoint, each as its segments.
type reservations struct {
	mu       sync.RWMutex
	prefixes map[string][]string // by contribution id; "" for the defaults
}

func newReservations() *reservations {
	r := &reservations{prefixes: map[string][]string{}}
	for i, p := range DefaultReserved {
		r.prefixes[fmt.Sprintf("default#%d", i)] = segments(p)
	}
	return r
}

func segments(path string) []string { return strings.Split(strings.Trim(path, "/"), "/") }

func (r *reservations) add(id string, path string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.prefixes[id] = segments(path)
}

func (r *reservations) remove(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.prefixes, id)
}

// covers reports whether a path, as its segments, lies under a reserved
// prefix. A pattern's parameter segment is not a literal, so it is not
// taken to match (a request path never holds one).
func (r *reservations) covers(segs []string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, p := range r.prefixes {
		if len(segs) >= len(p) && equalSegs(segs[:len(p)], p) {
			return true
		}
	}
	return false
}

func equalSegs(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// validateReserved checks a ReservedPoint item: an absolute path with no
// parameter segment.
func validateReserved(item any) error {
	p, ok := item.(string)
	if !ok || !strings.HasPrefix(p, "/") || p == "/" || strings.Contains(p, ":") || len(p) > 512 {
		return fmt.Errorf("a reserved prefix is a path such as \"/auth\", not %v", item)
	}
	return nil
}
