package meta

import (
	"fmt"
	"testing"
)

// TestPendingIsBounded: pending items expire, and the plugins holding only
// expired ones are forgotten once more than maxPendingPlugins hold some,
// so submissions under ever new ids cannot grow the map without end. Seen
// failing with the sweep left out (the map held every plugin).
func TestPendingIsBounded(t *testing.T) {
	s := newService(nil)
	for i := range 10 * maxPendingPlugins {
		s.remember(fmt.Sprintf("agent.p%d", i), MenuPoint, "m", Menu{Name: "m"})
		for _, items := range s.pending { // age them all
			for k, p := range items {
				p.at = p.at.Add(-2 * pendingTTL)
				items[k] = p
			}
		}
	}
	if n := len(s.pending); n > maxPendingPlugins+1 {
		t.Fatalf("%d plugins hold pending items, want at most %d", n, maxPendingPlugins+1)
	}
	s.remember("agent.fresh", ActionPoint, "a", Action{Name: "a"})
	if _, ok := s.pendingLocked("agent.fresh", ActionPoint, "a"); !ok {
		t.Fatal("a fresh pending item is not found")
	}
	if _, ok := s.pendingLocked("agent.fresh", ActionPoint, "b"); ok {
		t.Fatal("an item never validated is found")
	}
}
