package budget

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
)

// PluginID is the id of the budget system plugin.
const PluginID = "sms.budget"

// DefaultFlushEvery is how often the Meter writes its counts.
const DefaultFlushEvery = time.Second

// Options configure the plugin.
type Options struct {
	// Meter is the kernel's Meter (kernel.Options.Meter); required.
	Meter *Meter
	// FlushEvery is how often the Meter's counts are written to the
	// database; default DefaultFlushEvery.
	FlushEvery time.Duration
}

// Plugin returns the budget system plugin. It injects the database, keeps
// the period's use in Table, and provides contracts.BudgetKey. The runs of
// the ledger are kept in memory, in a ledger.MemoryStore replaced by a new
// one every MaxMemoryRuns claims, so memory stays bounded: a run is needed
// only while its work runs, and its spend is in the counts.
func Plugin(opts Options) kernel.Plugin {
	if opts.FlushEvery <= 0 {
		opts.FlushEvery = DefaultFlushEvery
	}
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: PluginID, Version: "1", Inject: []string{contracts.DatabaseKey},
			Provide: []string{contracts.BudgetKey}, Description: "Counts agent work against the tenant's budgets, through the run ledger"},
		Activate: func(ctx context.Context, c *kernel.Context) error { return activate(ctx, c, opts) },
	}
}

func activate(ctx context.Context, c *kernel.Context, opts Options) error {
	db, err := kernel.Lookup[contracts.Database](c, contracts.DatabaseKey)
	if err != nil {
		return err
	}
	m := opts.Meter
	if err := migrate(ctx, db); err != nil {
		return err
	}
	if err := m.load(ctx, db); err != nil {
		return err
	}
	api := c.Kernel()
	m.mu.Lock()
	m.k = api.Kernel
	m.mu.Unlock()
	err = api.DefineKey(contracts.BudgetKey, kernel.KeyMeta{Description: "the tenant's budgets and run ledger (contracts.Budgets)",
		MinProviderTrust: kernel.TrustSystem, MinConsumerTrust: kernel.TrustSystem})
	if err != nil {
		return err
	}
	stop := m.start(db, opts.FlushEvery, c.Logger())
	if err := c.OnUndo("stop writing the budget's counts", stop); err != nil {
		return errors.Join(err, stop())
	}
	b := &budgets{m: m, tenant: api.Name(), k: api.Kernel}
	return c.Provide(contracts.BudgetKey, contracts.Budgets(b))
}

// start writes the counts every interval until the returned stop, which
// writes them one last time; Close calls it too.
func (m *Meter) start(db contracts.Database, every time.Duration, log *slog.Logger) func() error {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				if err := m.flush(context.Background(), db); err != nil {
					log.Warn("Budget counts not written; they are kept for the next try", "error", err)
				}
			}
		}
	}()
	var once sync.Once
	stop := func() error {
		var err error
		once.Do(func() {
			close(quit)
			<-done
			err = m.flush(context.Background(), db)
		})
		return err
	}
	m.mu.Lock()
	m.stop = stop
	m.mu.Unlock()
	return stop
}

// Close stops writing the counts, after writing them one last time. The
// kernel server calls it before it closes the database.
func (m *Meter) Close() error {
	m.mu.Lock()
	stop := m.stop
	m.mu.Unlock()
	if stop == nil {
		return nil
	}
	return stop()
}
