package ormtest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/orm"
)

// Discount adds a discount field to invoice and declares a model of its
// own, the way a plugin extends another's model.
func Discount() kernel.Plugin {
	return kernel.Plugin{Manifest: kernel.Manifest{ID: "app.discount", Version: "1", Inject: []string{orm.Key},
		Contributes: map[string][]any{
			orm.FieldPoint: {orm.FieldContribution{Model: "invoice", Name: "discount", Field: orm.Field{Kind: orm.KindFloat, Default: 0.0}}},
			orm.ModelPoint: {orm.Model{Name: "coupon", Fields: map[string]orm.Field{"code": {Kind: orm.KindChar}}}},
		}}}
}

// testKeptColumns: disabling a plugin withdraws its model and field but
// keeps their table, column and data, which come back on enable. Seen
// failing with migrate dropping columns that no field declares.
func testKeptColumns(t *testing.T, s Suite) {
	db := s.Open(t)
	e := s.Boot(t, db, orm.Options{}, Discount())
	e.Seed(t)
	ctx := context.Background()
	inv1 := e.ID("invoice", "INV-1")
	if err := e.ORM.Write(Sudo(), "invoice", []int64{inv1}, map[string]any{"discount": 12.5}); err != nil {
		t.Fatalf("write discount: %v", err)
	}
	coupon := e.Create(t, "coupon", "c1", map[string]any{"code": "SAVE"})
	if err := e.K.ForceDisable(ctx, "app.discount"); err != nil {
		t.Fatalf("disable: %v", err)
	}
	if _, err := e.ORM.Read(Sudo(), "invoice", []int64{inv1}, orm.ReadSpec{"discount": nil}); !errors.Is(err, orm.ErrInvalid) {
		t.Fatalf("read the withdrawn field: %v, want ErrInvalid", err)
	}
	if slices.Contains(e.ORM.Models(), "coupon") {
		t.Fatal("the withdrawn model is still listed")
	}
	// A write while the field is withdrawn leaves its column alone.
	if err := e.ORM.Write(Sudo(), "invoice", []int64{inv1}, map[string]any{"total": 3}); err != nil {
		t.Fatalf("write while withdrawn: %v", err)
	}
	rows, err := db.Query(ctx, `SELECT "discount" AS "d" FROM "m_invoice" WHERE "id" = ?`, inv1)
	if err != nil || len(rows) != 1 || Show(rows[0]["d"]) != "12.5" {
		t.Fatalf("the column while withdrawn: %v, %v; want 12.5", rows, err)
	}
	if cols, _ := db.Columns(ctx, "m_coupon"); !slices.Contains(cols, "code") {
		t.Fatalf("the withdrawn model's table lost its columns: %v", cols)
	}
	if err := e.K.Enable(ctx, "app.discount"); err != nil {
		t.Fatalf("enable: %v", err)
	}
	recs, err := e.ORM.Read(Sudo(), "invoice", []int64{inv1}, orm.ReadSpec{"discount": nil})
	if err != nil || Show(recs[0]["discount"]) != "12.5" {
		t.Fatalf("discount after enable: %s, %v; want 12.5", Show(recs), err)
	}
	recs, err = e.ORM.Read(Sudo(), "coupon", []int64{coupon}, orm.ReadSpec{"code": nil})
	if err != nil || recs[0]["code"] != "SAVE" {
		t.Fatalf("coupon after enable: %s, %v", Show(recs), err)
	}
	// The default filled rows that predate the column.
	recs, err = e.ORM.Read(Sudo(), "invoice", []int64{e.ID("invoice", "INV-2")}, orm.ReadSpec{"discount": nil})
	if err != nil || Show(recs[0]["discount"]) != "0" {
		t.Fatalf("discount of an older invoice: %s, %v; want 0", Show(recs), err)
	}
}

// Recorder is a Database that records every statement and its arguments.
type Recorder struct {
	contracts.Database
	mu    sync.Mutex
	Calls []Call
}

// Call is one recorded statement.
type Call struct {
	SQL  string
	Args []any
}

// Query records and runs a statement.
func (r *Recorder) Query(ctx context.Context, sql string, args ...any) ([]contracts.Row, error) {
	r.record(sql, args)
	return r.Database.Query(ctx, sql, args...)
}

// Tx records the statements of the transaction too.
func (r *Recorder) Tx(ctx context.Context, fn func(tx contracts.Querier) error) error {
	return r.Database.Tx(ctx, func(tx contracts.Querier) error { return fn(&recordingTx{Querier: tx, r: r}) })
}

func (r *Recorder) record(sql string, args []any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Calls = append(r.Calls, Call{SQL: sql, Args: args})
}

// Reset forgets the recorded calls.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Calls = nil
}

// Count returns how many statements were recorded.
func (r *Recorder) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.Calls)
}

type recordingTx struct {
	contracts.Querier
	r *Recorder
}

func (t *recordingTx) Query(ctx context.Context, sql string, args ...any) ([]contracts.Row, error) {
	t.r.record(sql, args)
	return t.Querier.Query(ctx, sql, args...)
}

// testPlaceholders: values from domains, writes and reads reach SQL only
// as bound arguments. Seen failing with compare splicing its value into
// the SQL text.
func testPlaceholders(t *testing.T, s Suite) {
	rec := &Recorder{Database: s.Open(t)}
	e := s.Boot(t, rec, orm.Options{})
	e.Seed(t)
	const evil = `x' OR '1'='1`
	rec.Reset()
	ops := []func() error{
		func() error {
			_, err := e.ORM.Search(Sudo(), "invoice", orm.Domain{[]any{"number", "=", evil}, "|", []any{"notes", "ilike", evil},
				[]any{"partner.name", "in", []any{evil, "y"}}}, orm.SearchOptions{})
			return err
		},
		func() error {
			_, err := e.ORM.ReadGroup(Sudo(), "invoice", orm.GroupRequest{GroupBy: []string{"state"}, Domain: orm.Domain{[]any{"notes", "like", evil}}})
			return err
		},
		func() error {
			_, err := e.ORM.Create(Sudo(), "invoice", map[string]any{"number": evil, "notes": evil})
			return err
		},
		func() error {
			return e.ORM.Write(Sudo(), "invoice", []int64{e.ID("invoice", "INV-1")}, map[string]any{"notes": evil,
				"lines": []any{map[string]any{"op": "create", "values": map[string]any{"product": evil}}}})
		},
	}
	for i, op := range ops {
		if err := op(); err != nil {
			t.Fatalf("operation %d: %v", i+1, err)
		}
	}
	bound := 0
	for _, c := range rec.Calls {
		if strings.Contains(c.SQL, "OR '1'") || strings.Contains(c.SQL, evil) {
			t.Fatalf("a value reached the SQL text: %s", c.SQL)
		}
		for _, a := range c.Args {
			if s, ok := a.(string); ok && strings.Contains(s, "OR '1'='1") {
				bound++
			}
		}
	}
	if bound < 6 {
		t.Fatalf("the value was bound %d times, want every use (at least 6)", bound)
	}
}
