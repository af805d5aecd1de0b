package pgstore_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sms-baseline/sms/ledger"
	"github.com/sms-baseline/sms/ledger/internal/pgtest"
	"github.com/sms-baseline/sms/ledger/pgstore"
	"github.com/sms-baseline/sms/ledger/storetest"
)

// workers is the number of runs driven concurrently.
const workers = 8

// stepsPerRun is the plan length of each benchmark run.
const stepsPerRun = 10

// BenchmarkLedgerPostgres drives 8 runs at once, each worker claiming a run
// of 10 steps and walking it with NextStep and RecordStep, then claiming the
// next. One op is one recorded step; steps/s is the aggregate rate. Both
// modes connect as the unprivileged role, so row-level security is enforced:
//
//   - dedicated: each worker owns one connection for its whole life and sets
//     its tenant once for the connection;
//   - tenant-tx: workers share a pool and run every ledger call in its own
//     WithTenant transaction, as a pooled host must.
func BenchmarkLedgerPostgres(b *testing.B) {
	b.Run("dedicated", func(b *testing.B) {
		db := pgtest.NewDatabase(b)
		pool := db.AppPool(b, workers)
		drive(b, func(ctx context.Context, worker int) (ledgerCalls, func(), error) {
			conn, err := pool.Acquire(ctx)
			if err != nil {
				return nil, nil, err
			}
			if _, err := conn.Exec(ctx, `select set_config($1, $2, false)`, pgstore.TenantSetting, tenantOf(worker)); err != nil {
				conn.Release()
				return nil, nil, err
			}
			l := ledger.New(pgstore.New(conn))
			// Hijack takes the tenant-scoped connection out of the pool for good.
			release := func() { _ = conn.Hijack().Close(context.Background()) }
			return direct{l}, release, nil
		})
	})
	b.Run("tenant-tx", func(b *testing.B) {
		db := pgtest.NewDatabase(b)
		pool := db.AppPool(b, workers)
		drive(b, func(_ context.Context, worker int) (ledgerCalls, func(), error) {
			return scoped{pool: pool, tenant: tenantOf(worker)}, func() {}, nil
		})
	})
	b.Run("tenant-stmt", func(b *testing.B) {
		db := pgtest.NewDatabase(b)
		pool := db.AppPool(b, workers)
		drive(b, func(_ context.Context, worker int) (ledgerCalls, func(), error) {
			tdb, err := pgstore.Tenant(pool, tenantOf(worker))
			return direct{ledger.New(pgstore.New(tdb))}, func() {}, err
		})
	})
}

func tenantOf(worker int) string { return fmt.Sprintf("tenant-%d", worker) }

// ledgerCalls is the part of the ledger a benchmark worker uses.
type ledgerCalls interface {
	claim(ctx context.Context, c ledger.Claim) error
	next(ctx context.Context, runID string) (ledger.Next, error)
	record(ctx context.Context, runID string, index int) error
}

type direct struct{ l *ledger.Ledger }

func (d direct) claim(ctx context.Context, c ledger.Claim) error {
	_, err := d.l.ClaimRun(ctx, c)
	return err
}

func (d direct) next(ctx context.Context, runID string) (ledger.Next, error) {
	return d.l.NextStep(ctx, runID, ledger.Declaration{})
}

func (d direct) record(ctx context.Context, runID string, index int) error {
	_, err := d.l.RecordStep(ctx, runID, index, ledger.Outcome{OK: true, SpentMinor: 1})
	return err
}

type scoped struct {
	pool   *pgxpool.Pool
	tenant string
}

func (s scoped) with(ctx context.Context, fn func(direct) error) error {
	return pgstore.WithTenant(ctx, s.pool, s.tenant, func(tx pgx.Tx) error {
		return fn(direct{ledger.New(pgstore.New(tx))})
	})
}

func (s scoped) claim(ctx context.Context, c ledger.Claim) error {
	return s.with(ctx, func(d direct) error { return d.claim(ctx, c) })
}

func (s scoped) next(ctx context.Context, runID string) (next ledger.Next, err error) {
	err = s.with(ctx, func(d direct) error { next, err = d.next(ctx, runID); return err })
	return next, err
}

func (s scoped) record(ctx context.Context, runID string, index int) error {
	return s.with(ctx, func(d direct) error { return d.record(ctx, runID, index) })
}

type opener func(ctx context.Context, worker int) (ledgerCalls, func(), error)

// drive runs the workers until b.N steps are recorded in total.
func drive(b *testing.B, open opener) {
	ctx := context.Background()
	var slots atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for w := range workers {
		wg.Go(func() {
			calls, release, err := open(ctx, w)
			if err != nil {
				b.Error(err)
				return
			}
			defer release()
			if err := work(ctx, calls, w, func() bool { return slots.Add(1) <= int64(b.N) }); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}

// work claims and walks runs while take grants another step.
func work(ctx context.Context, calls ledgerCalls, worker int, take func() bool) error {
	for r := 0; ; r++ {
		c := storetest.NewClaim(fmt.Sprintf("w%d-r%d", worker, r), tenantOf(worker), storetest.Steps(stepsPerRun)...)
		c.Period = fmt.Sprintf("bench-%d", r)
		if err := calls.claim(ctx, c); err != nil {
			return err
		}
		for {
			next, err := calls.next(ctx, c.RunID)
			if err != nil {
				return err
			}
			if next.Done {
				break
			}
			if !take() {
				return nil
			}
			if err := calls.record(ctx, c.RunID, next.Index); err != nil {
				return err
			}
		}
	}
}
