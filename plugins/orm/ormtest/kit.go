package ormtest

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/orm"
)

// Open returns a fresh, empty database for one test; it closes it (and
// drops what it made) with t.Cleanup.
type Open func(t testing.TB) contracts.Database

// Suite is what the suite runs on: fresh databases, and the system
// plugins the ORM needs besides the database (the http plugin).
type Suite struct {
	Open Open
	Base []kernel.Plugin
	// Executor runs agent plugins, for tests that propose some.
	Executor kernel.Executor
}

// Run runs the whole suite.
func Run(t *testing.T, s Suite) {
	t.Run("Domains", func(t *testing.T) { testDomains(t, s) })
	t.Run("DomainErrors", func(t *testing.T) { testDomainErrors(t, s) })
	t.Run("Order", func(t *testing.T) { testOrder(t, s) })
	t.Run("Read", func(t *testing.T) { testRead(t, s) })
	t.Run("CreateDefaults", func(t *testing.T) { testCreateDefaults(t, s) })
	t.Run("WriteCommands", func(t *testing.T) { testWriteCommands(t, s) })
	t.Run("WriteIsOneTransaction", func(t *testing.T) { testWriteAtomic(t, s) })
	t.Run("Unlink", func(t *testing.T) { testUnlink(t, s) })
	t.Run("ReadGroup", func(t *testing.T) { testReadGroup(t, s) })
	t.Run("Guard", func(t *testing.T) { testGuard(t, s) })
	t.Run("GuardWrites", func(t *testing.T) { testGuardWrites(t, s) })
	t.Run("KeptColumns", func(t *testing.T) { testKeptColumns(t, s) })
	t.Run("Placeholders", func(t *testing.T) { testPlaceholders(t, s) })
}

// Clock is the fixed clock the suite's ORM runs on.
func Clock() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) }

// Env is a booted kernel with the ORM and the fixture's models.
type Env struct {
	K   *kernel.Kernel
	DB  contracts.Database
	ORM orm.Service
	// IDs of the fixture's records by model and name (number for invoices).
	IDs map[string]map[string]int64
	mu  sync.Mutex
}

// DatabasePlugin provides db under the database key, as a composition root does.
func DatabasePlugin(db contracts.Database) kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: "test.database", Version: "1", Provide: []string{contracts.DatabaseKey}},
		Activate: func(_ context.Context, c *kernel.Context) error {
			if err := c.Kernel().DefineKey(contracts.DatabaseKey, contracts.DatabaseKeyMeta); err != nil {
				return err
			}
			return c.Provide(contracts.DatabaseKey, db)
		},
	}
}

// Boot starts a kernel with the database, the Base and ORM plugins, the
// fixture's models and the given plugins, and fails t unless all activate.
func (s Suite) Boot(t testing.TB, db contracts.Database, opts orm.Options, plugins ...kernel.Plugin) *Env {
	t.Helper()
	if opts.Now == nil {
		opts.Now = Clock
	}
	k := kernel.New(kernel.Options{Executor: s.Executor})
	all := append([]kernel.Plugin{DatabasePlugin(db)}, s.Base...)
	all = append(append(all, orm.New(opts), App()), plugins...)
	for _, p := range all {
		if err := k.Install(p); err != nil {
			t.Fatalf("install %s: %v", p.Manifest.ID, err)
		}
	}
	if err := k.Settle(context.Background()); err != nil {
		t.Fatalf("settle: %v", err)
	}
	v, err := k.GetValue(orm.Key)
	if err != nil {
		t.Fatal(err)
	}
	return &Env{K: k, DB: db, ORM: v.(orm.Service), IDs: map[string]map[string]int64{}}
}

// Sudo is a context whose operations bypass the guard.
func Sudo() context.Context { return orm.Sudo(context.Background()) }

// AppID is the fixture plugin's id.
const AppID = "app.sales"

// App is a system plugin declaring the fixture's models: country,
// contact, tag, invoice and invoice_line, and invoice's compute method.
func App() kernel.Plugin {
	return kernel.Plugin{
		Manifest: kernel.Manifest{ID: AppID, Version: "1", Inject: []string{orm.Key},
			Points: []string{orm.MethodPoint},
			Contributes: map[string][]any{orm.ModelPoint: {
				orm.Model{Name: "country", Fields: map[string]orm.Field{"code": {Kind: orm.KindChar, Required: true}, "name": {Kind: orm.KindChar}}},
				orm.Model{Name: "tag", Fields: map[string]orm.Field{"name": {Kind: orm.KindChar, Required: true}}},
				orm.Model{Name: "contact", Fields: map[string]orm.Field{
					"name":     {Kind: orm.KindChar, Required: true},
					"email":    {Kind: orm.KindChar},
					"country":  {Kind: orm.KindMany2One, Target: "country", OnDelete: orm.OnDeleteRestrict},
					"invoices": {Kind: orm.KindOne2Many, Target: "invoice", Inverse: "partner"},
				}},
				Invoice(),
				orm.Model{Name: "invoice_line", Fields: map[string]orm.Field{
					"invoice": {Kind: orm.KindMany2One, Target: "invoice", OnDelete: orm.OnDeleteCascade, Required: true},
					"product": {Kind: orm.KindChar},
					"qty":     {Kind: orm.KindInt},
					"price":   {Kind: orm.KindFloat},
				}},
			}}},
		Activate: func(_ context.Context, c *kernel.Context) error {
			_, err := c.Contribute(orm.MethodPoint, orm.Method{Model: "invoice", Name: "double_total",
				Handler: func(_ context.Context, call orm.MethodCall) (any, error) {
					out := map[int64]any{}
					for _, r := range call.Records {
						if x, ok := r["total"].(float64); ok {
							out[r["id"].(int64)] = x * 2
						}
					}
					return out, nil
				}})
			return err
		},
	}
}

// Invoice is the fixture's invoice model.
func Invoice() orm.Model {
	return orm.Model{Name: "invoice", DisplayField: "number", Order: "number", Fields: map[string]orm.Field{
		"number":  {Kind: orm.KindChar, Required: true},
		"partner": {Kind: orm.KindMany2One, Target: "contact", OnDelete: orm.OnDeleteRestrict},
		"state": {Kind: orm.KindSelection, Default: "draft",
			Options: []orm.Option{{Value: "draft"}, {Value: "posted"}, {Value: "paid"}}},
		"date":            {Kind: orm.KindDate},
		"total":           {Kind: orm.KindFloat},
		"qty":             {Kind: orm.KindInt},
		"notes":           {Kind: orm.KindText},
		"meta":            {Kind: orm.KindJSON},
		"paid_at":         {Kind: orm.KindDatetime},
		"lines":           {Kind: orm.KindOne2Many, Target: "invoice_line", Inverse: "invoice"},
		"tags":            {Kind: orm.KindMany2Many, Target: "tag"},
		"partner_email":   {Kind: orm.KindRelated, Path: "partner.email"},
		"partner_country": {Kind: orm.KindRelated, Path: "partner.country.code"},
		"doubled":         {Kind: orm.KindComputed, Returns: orm.KindFloat, Compute: "double_total", Depends: []string{"total"}},
	}}
}

// Seed creates the fixture's records as sudo.
func (e *Env) Seed(t testing.TB) {
	t.Helper()
	fr := e.Create(t, "country", "FR", map[string]any{"code": "FR", "name": "France"})
	de := e.Create(t, "country", "DE", map[string]any{"code": "DE", "name": "Germany"})
	acme := e.Create(t, "contact", "Acme", map[string]any{"name": "Acme", "email": "acme@x.fr", "country": fr})
	beta := e.Create(t, "contact", "Beta", map[string]any{"name": "Beta", "email": "beta_1@x.de", "country": de})
	uni := e.Create(t, "contact", "Ünïcode", map[string]any{"name": "Ünïcode"})
	urgent := e.Create(t, "tag", "urgent", map[string]any{"name": "urgent"})
	big := e.Create(t, "tag", "big", map[string]any{"name": "big"})
	e.Create(t, "invoice", "INV-1", map[string]any{"number": "INV-1", "partner": acme, "date": "2026-01-05", "total": 100,
		"qty": 1, "notes": "Hello World", "tags": []any{urgent}, "meta": map[string]any{"k": "v"},
		"lines": []any{map[string]any{"op": "create", "values": map[string]any{"product": "A", "qty": 1, "price": 100}}}})
	e.Create(t, "invoice", "INV-2", map[string]any{"number": "INV-2", "partner": beta, "state": "posted", "date": "2026-01-20",
		"total": 250.5, "qty": 2, "notes": "50% off_now", "tags": []any{urgent, big}, "paid_at": "2026-01-21T10:00:00+02:00",
		"lines": []any{
			map[string]any{"op": "create", "values": map[string]any{"product": "B widget", "qty": 2, "price": 125.25}},
			map[string]any{"op": "create", "values": map[string]any{"product": "C gadget", "qty": 1, "price": 0}},
		}})
	e.Create(t, "invoice", "INV-3", map[string]any{"number": "INV-3", "partner": acme, "state": "paid", "date": "2026-02-03", "total": 0})
	e.Create(t, "invoice", "inv-4", map[string]any{"number": "inv-4", "qty": 4, "notes": `back\slash`})
	e.Create(t, "invoice", "INV-5", map[string]any{"number": "INV-5", "partner": uni, "state": "posted", "date": "2026-03-15",
		"total": 75, "qty": 3, "notes": "ÄBC abc",
		"lines": []any{map[string]any{"op": "create", "values": map[string]any{"product": "Widget pro", "qty": 3, "price": 25}}}})
}

// Create creates a record as sudo and remembers its id under name.
func (e *Env) Create(t testing.TB, model, name string, values map[string]any) int64 {
	t.Helper()
	id, err := e.ORM.Create(Sudo(), model, values)
	if err != nil {
		t.Fatalf("create %s %s: %v", model, name, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.IDs[model] == nil {
		e.IDs[model] = map[string]int64{}
	}
	e.IDs[model][name] = id
	return id
}

// ID returns the id of a fixture record.
func (e *Env) ID(model, name string) int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.IDs[model][name]
}

// Names maps invoice ids back to their numbers, sorted unless keep.
func (e *Env) Names(model string, ids []int64, keep bool) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, id := range ids {
		for name, x := range e.IDs[model] {
			if x == id {
				out = append(out, name)
			}
		}
	}
	if !keep {
		slices.Sort(out)
	}
	return out
}

// JSON decodes a JSON literal, failing t when it is malformed.
func JSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad JSON %s: %v", s, err)
	}
	return v
}

// Show encodes v for failure messages.
func Show(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}
