package orm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
)

// migrateTimeout bounds a migration started from a kernel callback, which
// has no context of its own.
const migrateTimeout = 30 * time.Second

// service is the Service of one activation of the plugin.
type service struct {
	db        contracts.Database
	cols      columns
	reg       registry
	now       func() time.Time
	logger    *slog.Logger
	contextOf func(context.Context) OpContext
	isSystem  func(plugin string) bool
	// requireGuard closes everything but sudo while no guard is set.
	requireGuard bool
	userREST     bool // Options.UserREST
	actAs        func(ctx context.Context, plugin string) context.Context
	budget       *readBudget // shared by every read in flight
	// spend charges rows written for agent code to its plugin's budget
	// (kernel.Spend); nil outside a kernel.
	spend func(context.Context, kernel.Use)
	files *files // binary fields' files in the object store

	// live is set while the activation that made this service is active;
	// once dead, point validators check shapes and touch no database.
	live atomic.Bool

	migMu    sync.RWMutex
	migrated map[string]string // model -> signature of what its tables have
	fresh    []metaRow         // ownership records written while their plugin's mount may still roll back

	mu        sync.RWMutex
	guard     Guard
	guardSeq  uint64
	listeners map[Event]map[uint64]Listener
	tracked   map[string]map[string]int // model -> field -> Track calls
	lisSeq    uint64

	clauseMu sync.Mutex
	clauses  map[clauseKey]guardClause // see guardClause
}

var _ Service = (*service)(nil)

func newService(db contracts.Database, opts Options, logger *slog.Logger) (*service, error) {
	cols, err := columnsOf(db.Dialect())
	if err != nil {
		return nil, fmt.Errorf("orm: %w", err)
	}
	s := &service{db: contracts.Ambient(db), cols: cols, now: opts.Now, logger: logger, contextOf: opts.ContextOf, requireGuard: opts.RequireGuard, userREST: opts.UserREST, actAs: opts.ActAs,
		migrated: map[string]string{}, listeners: map[Event]map[uint64]Listener{}, budget: newReadBudget(opts.ReadBudget),
		files: newFiles(opts.Objects)}
	if s.now == nil {
		s.now = time.Now
	}
	if s.contextOf == nil {
		s.contextOf = func(context.Context) OpContext { return OpContext{} }
	}
	s.isSystem = func(string) bool { return false }
	return s, nil
}

// opOf is who ctx acts for: the OpContext it carries, else the one the
// plugin's ContextOf derives from the request or chat turn it serves
// (whose Sudo is ignored); Sudo applies when Sudo(ctx) or WithOp said so.
func (s *service) opOf(ctx context.Context) OpContext {
	op, ok := OpFrom(ctx)
	if !ok {
		op = s.contextOf(ctx)
	}
	op.Sudo = sudoFrom(ctx)
	return op
}

func (s *service) Models() []string {
	sch := s.reg.schema()
	names := make([]string, 0, len(sch.models))
	for name := range sch.models {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func (s *service) Spec(name string) (ModelSpec, error) {
	m, ok := s.reg.schema().models[name]
	if !ok {
		return ModelSpec{}, errorf(ErrInvalid, at{name, ""}, "no such model")
	}
	spec := ModelSpec{Name: m.name, Description: m.description, Plugin: m.plugin, DisplayField: m.display}
	for i, t := range m.order {
		if i > 0 {
			spec.Order += ", "
		}
		spec.Order += t.field
		if t.desc {
			spec.Order += " desc"
		}
	}
	spec.Fields = append(spec.Fields, []FieldSpec{
		{Name: FieldID, Field: Field{Kind: KindInt}, Stored: true, ReadOnly: true},
		{Name: FieldDisplay, Field: Field{Kind: KindChar}, ReadOnly: true},
		{Name: FieldCreatedAt, Field: Field{Kind: KindDatetime}, Stored: true, ReadOnly: true},
		{Name: FieldUpdatedAt, Field: Field{Kind: KindDatetime}, Stored: true, ReadOnly: true},
		{Name: FieldCreatedBy, Field: Field{Kind: KindInt}, Stored: true, ReadOnly: true},
		{Name: FieldUpdatedBy, Field: Field{Kind: KindInt}, Stored: true, ReadOnly: true},
	}...)
	for _, n := range m.names() {
		f := m.fields[n]
		if f.broken != "" {
			continue
		}
		fs := FieldSpec{Name: n, Field: f.Field, Plugin: f.plugin, Stored: f.stored(),
			ReadOnly: f.Kind == KindComputed || f.Kind == KindRelated}
		if f.Kind == KindMany2One {
			fs.OnDelete = f.onDelete() // what unlinking the target really does
		}
		spec.Fields = append(spec.Fields, fs)
	}
	return spec, nil
}

// model returns the live schema and model name, its tables migrated (a
// migration that failed when the contribution arrived is retried here).
func (s *service) model(ctx context.Context, name string) (*schema, *model, error) {
	sch := s.reg.schema()
	m, ok := sch.models[name]
	if !ok {
		return nil, nil, errorf(ErrInvalid, at{name, ""}, "no such model")
	}
	return sch, m, s.ensure(ctx, m)
}

// ensure migrates m's tables unless they are known to be up to date.
func (s *service) ensure(ctx context.Context, m *model) error {
	sig := signature(m)
	s.migMu.RLock()
	have, ok := s.migrated[m.name]
	s.migMu.RUnlock()
	if ok && have == sig {
		return nil // the common case takes no exclusive lock
	}
	s.migMu.Lock()
	defer s.migMu.Unlock()
	if have, ok := s.migrated[m.name]; ok && have == sig {
		return nil
	}
	fresh, err := migrate(ctx, s.db, s.cols, m)
	if err != nil {
		return fmt.Errorf("migrate model %s: %w", m.name, err)
	}
	if contracts.InAtomic(ctx) {
		// The tables are the batch's until it commits: a rollback undoes
		// the migration, which must then run again.
		contracts.AfterCommit(ctx, func() {
			s.migMu.Lock()
			defer s.migMu.Unlock()
			s.migrated[m.name] = sig
			s.fresh = append(s.fresh, fresh...)
		})
		return nil
	}
	s.migrated[m.name] = sig
	s.fresh = append(s.fresh, fresh...)
	return nil
}

// ensureNow migrates from a kernel callback.
func (s *service) ensureNow(m *model) error {
	ctx, cancel := context.WithTimeout(context.Background(), migrateTimeout)
	defer cancel()
	return s.ensure(ctx, m)
}

func domainErr(model string, err error) error {
	var de *domainError
	if errors.As(err, &de) {
		return &Error{Kind: ErrInvalid, Model: model, Term: de.term, Msg: "domain: " + de.msg}
	}
	return err
}

func (s *service) Search(ctx context.Context, model string, domain Domain, opts SearchOptions) ([]int64, error) {
	_, m, err := s.model(ctx, model)
	if err != nil {
		return nil, err
	}
	limit, err := pageLimit(m.name, opts)
	if err != nil {
		return nil, err
	}
	order := m.order
	if opts.Order != "" {
		if order, err = parseOrder(opts.Order); err != nil {
			return nil, errorf(ErrInvalid, at{m.name, ""}, "order: %v", err)
		}
	}
	by, err := orderBy(m, "t0", order)
	if err != nil {
		return nil, err
	}
	where, args, err := s.filter(ctx, m, ActionRead, domain)
	if err != nil {
		return nil, err
	}
	// The page is literal, not bound: SQLite prepares a statement again
	// whenever a LIMIT or OFFSET parameter is bound, which would defeat
	// the store's statement cache.
	q := fmt.Sprintf(`SELECT t0."id" AS "id" FROM %q t0 WHERE %s ORDER BY %s LIMIT %d OFFSET %d`, Table(m.name), where, by, limit, opts.Offset)
	rows, err := s.db.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("search model %s: %w", m.name, err)
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i], _ = asInt(r["id"])
	}
	return ids, nil
}

func pageLimit(model string, opts SearchOptions) (int, error) {
	switch {
	case opts.Limit < 0 || opts.Limit > MaxLimit:
		return 0, errorf(ErrInvalid, at{model, ""}, "limit %d must be from 1 to %d (0 for %d)", opts.Limit, MaxLimit, DefaultLimit)
	case opts.Offset < 0:
		return 0, errorf(ErrInvalid, at{model, ""}, "offset %d must not be negative", opts.Offset)
	case opts.Limit == 0:
		return DefaultLimit, nil
	}
	return opts.Limit, nil
}

func (s *service) Count(ctx context.Context, model string, domain Domain) (int64, error) {
	_, m, err := s.model(ctx, model)
	if err != nil {
		return 0, err
	}
	return s.count(ctx, m, ActionRead, domain)
}

// count counts the records of m that match domain and action's guard.
func (s *service) count(ctx context.Context, m *model, action Action, domain Domain) (int64, error) {
	where, args, err := s.filter(ctx, m, action, domain)
	if err != nil {
		return 0, err
	}
	rows, err := s.db.Query(ctx, fmt.Sprintf(`SELECT COUNT(*) AS "n" FROM %q t0 WHERE %s`, Table(m.name), where), args...)
	if err != nil {
		return 0, fmt.Errorf("count model %s: %w", m.name, err)
	}
	n, _ := asInt(rows[0]["n"])
	return n, nil
}

func (s *service) On(event Event, fn Listener) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lisSeq++
	id := s.lisSeq
	if s.listeners[event] == nil {
		s.listeners[event] = map[uint64]Listener{}
	}
	s.listeners[event][id] = fn
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.listeners[event], id)
	}
}

// notify calls the listeners of c's event once its write is committed.
func (s *service) notify(ctx context.Context, c Change) {
	s.mu.RLock()
	var fns []Listener
	ids := make([]uint64, 0, len(s.listeners[c.Event]))
	for id := range s.listeners[c.Event] {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		fns = append(fns, s.listeners[c.Event][id])
	}
	s.mu.RUnlock()
	for _, fn := range fns {
		func() {
			defer func() {
				if p := recover(); p != nil {
					s.logger.Error("ORM listener panicked", "model", c.Model, "on", string(c.Event), "panic", p)
				}
			}()
			fn(context.WithoutCancel(ctx), c)
		}()
	}
}
