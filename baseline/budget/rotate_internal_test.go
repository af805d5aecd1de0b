package budget

import "testing"

// The runs are kept in a memory store replaced every MaxMemoryRuns claims,
// so a kernel's runs never hold more than that many. Seen failing with the
// rotation removed (one store for every claim).
func TestRunStoreRotates(t *testing.T) {
	b := &budgets{m: NewMeter(Config{}, nil)}
	b.ledger()
	first := b.memory
	for range MaxMemoryRuns - 1 {
		b.ledger()
	}
	if b.memory != first {
		t.Fatalf("the store was replaced before %d claims", MaxMemoryRuns)
	}
	b.ledger()
	if b.memory == first || b.claims != 1 {
		t.Fatalf("claim %d: store replaced %v, claims %d; want a new store holding 1", MaxMemoryRuns+1, b.memory != first, b.claims)
	}
}
