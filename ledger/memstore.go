package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
)

// MemoryStore keeps runs in process memory. It needs no configuration (the
// zero value is ready to use), is safe for concurrent use, and refuses the
// same writes the Postgres schema refuses: a second run for a key, a change
// to the plan or claim terms, a halt without reason and detail, a failed step
// without a reason. Runs live as long as the MemoryStore value; a new Ledger
// over the same MemoryStore resumes them.
type MemoryStore struct {
	mu    sync.Mutex
	runs  map[string]*memRun
	byKey map[runKey]string
}

type runKey struct{ agent, tenant, period string }

type memRun struct {
	run   Run
	plan  []byte // the plan's JSON encoding at claim, to detect any change
	steps []StepRecord
}

// NewMemoryStore returns an empty store.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{}
}

func keyOf(r Run) runKey { return runKey{r.Agent, r.TenantKey, r.Period} }

// InsertRun implements Store. The key check and the insert happen under one
// lock, the in-memory counterpart of the UNIQUE constraint.
func (s *MemoryStore) InsertRun(ctx context.Context, run Run) (Run, bool, error) {
	if err := ctx.Err(); err != nil {
		return Run{}, false, fmt.Errorf("insert run: %w", err)
	}
	if err := CheckRun(run); err != nil {
		return Run{}, false, fmt.Errorf("insert run: %w", err)
	}
	plan, err := json.Marshal(run.Plan)
	if err != nil {
		return Run{}, false, fmt.Errorf("insert run: encode plan: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runs == nil {
		s.runs, s.byKey = map[string]*memRun{}, map[runKey]string{}
	}
	if id, ok := s.byKey[keyOf(run)]; ok {
		return cloneRun(s.runs[id].run), false, nil
	}
	if _, ok := s.runs[run.RunID]; ok {
		return Run{}, false, fmt.Errorf("insert run: %w", ErrRunIDTaken)
	}
	s.runs[run.RunID] = &memRun{run: cloneRun(run), plan: plan}
	s.byKey[keyOf(run)] = run.RunID
	return cloneRun(run), true, nil
}

// LoadRun implements Store.
func (s *MemoryStore) LoadRun(ctx context.Context, runID string) (Run, error) {
	if err := ctx.Err(); err != nil {
		return Run{}, fmt.Errorf("load run: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.runs[runID]
	if !ok {
		return Run{}, ErrNotFound
	}
	return cloneRun(m.run), nil
}

// UpdateRun implements Store, checking in the order Postgres does: the
// version, then immutability, then the row constraints, then the step.
func (s *MemoryStore) UpdateRun(ctx context.Context, u Update) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("update run: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.runs[u.Run.RunID]
	if !ok {
		return ErrNotFound
	}
	if err := m.check(u); err != nil {
		return err
	}
	m.run = cloneRun(u.Run)
	m.run.Version = u.Run.Version + 1
	if u.Step != nil {
		m.steps = append(m.steps, *u.Step)
	}
	return nil
}

func (m *memRun) check(u Update) error {
	if u.Run.Version != m.run.Version {
		return fmt.Errorf("%w: version is %d, update is based on %d", ErrConflict, m.run.Version, u.Run.Version)
	}
	if err := checkClaimTerms(m, u.Run); err != nil {
		return err
	}
	if err := CheckRun(u.Run); err != nil {
		return err
	}
	if u.Step == nil {
		return nil
	}
	if err := CheckStepRecord(*u.Step); err != nil {
		return err
	}
	for _, rec := range m.steps {
		if rec.Index == u.Step.Index {
			return fmt.Errorf("%w: step %d is already recorded", ErrConflict, rec.Index)
		}
	}
	return nil
}

// checkClaimTerms is the in-memory counterpart of the immutability trigger.
func checkClaimTerms(m *memRun, next Run) error {
	old := m.run
	if keyOf(old) != keyOf(next) || old.Ceiling != next.Ceiling {
		return fmt.Errorf("%w: run %q was claimed by agent %q for tenant %q, period %q with ceiling %d %s",
			ErrPlanImmutable, old.RunID, old.Agent, old.TenantKey, old.Period, old.Ceiling.AmountMinor, old.Ceiling.Currency)
	}
	plan, err := json.Marshal(next.Plan)
	if err != nil || !bytes.Equal(plan, m.plan) {
		return fmt.Errorf("%w: the plan of run %q differs from the one claimed", ErrPlanImmutable, old.RunID)
	}
	return nil
}

// LoadSteps implements Store.
func (s *MemoryStore) LoadSteps(ctx context.Context, runID string) ([]StepRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load steps: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.runs[runID]
	if !ok {
		return nil, nil
	}
	return slices.Clone(m.steps), nil
}

// cloneRun copies r deeply so callers never share slices with the store.
func cloneRun(r Run) Run {
	steps := make([]Step, len(r.Plan.Steps))
	for i, st := range r.Plan.Steps {
		st.Capabilities = slices.Clone(st.Capabilities)
		st.Input = bytes.Clone(st.Input)
		steps[i] = st
	}
	r.Plan.Steps = steps
	return r
}
