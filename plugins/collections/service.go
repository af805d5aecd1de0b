package collections

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
)

// migrateTimeout bounds a migration started from a kernel observer or
// validator, which get no context of their own.
const migrateTimeout = 30 * time.Second

// timeLayout writes created_at and updated_at: fixed width, so the text
// sorts in time order.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// service is the Service of one activation of the plugin.
type service struct {
	db     contracts.Database
	types  contracts.ColumnTypes
	reg    registry
	now    func() time.Time
	logger *slog.Logger
	// spend charges rows written for agent code to its plugin's budget
	// (kernel.Spend); nil outside a kernel.
	spend func(context.Context, kernel.Use)

	// live is set while the activation that made this service is active.
	// A point's validator outlives it (points are vocabulary); once dead it
	// only checks shapes and touches no database.
	live atomic.Bool

	migMu    sync.Mutex
	migrated map[string]string // collection -> field names its table is known to have

	requireGuard bool
	guardMu      sync.RWMutex
	guard        Guard
	guardSeq     uint64
}

var _ Service = (*service)(nil)

func newService(db contracts.Database, now func() time.Time, logger *slog.Logger) (*service, error) {
	types, err := db.Dialect().Types()
	if err != nil {
		return nil, fmt.Errorf("collections: %w", err)
	}
	if now == nil {
		now = time.Now
	}
	return &service{db: db, types: types, now: now, logger: logger, migrated: map[string]string{}}, nil
}

func (s *service) Definitions() []Collection { return s.reg.definitions() }

func (s *service) Definition(name string) (Collection, error) {
	def, ok := s.reg.definition(name)
	if !ok {
		return def, notFoundf("no collection %q", name)
	}
	return def, nil
}

// MarshalJSON is what agent code sees when it reads the key with cap.get:
// the definitions, never the database.
func (s *service) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"collections": s.Definitions()})
}

// collection returns the definition of a live collection, making sure its
// table has every column first (this retries a migration that failed when
// the contribution arrived).
func (s *service) collection(ctx context.Context, name string) (Collection, error) {
	def, err := s.Definition(name)
	if err != nil {
		return def, err
	}
	return def, s.ensure(ctx, def)
}

// ensure migrates def's table unless it is known to be up to date.
func (s *service) ensure(ctx context.Context, def Collection) error {
	names := make([]string, len(def.Fields))
	for i, f := range def.Fields {
		names[i] = f.Name
	}
	sig := strings.Join(names, ",")
	s.migMu.Lock()
	defer s.migMu.Unlock()
	if have, ok := s.migrated[def.Name]; ok && have == sig {
		return nil
	}
	if err := migrate(ctx, s.db, s.types, def); err != nil {
		return fmt.Errorf("migrate collection %q: %w", def.Name, err)
	}
	s.migrated[def.Name] = sig
	return nil
}

// ensureNow migrates from a kernel callback, which has no context.
func (s *service) ensureNow(def Collection) error {
	ctx, cancel := context.WithTimeout(context.Background(), migrateTimeout)
	defer cancel()
	return s.ensure(ctx, def)
}

// migrate brings def's table up to date additively, in one transaction: it
// creates the table when it is missing and adds each missing column,
// writing the field's default into the rows already there. It never drops
// or changes a column, so withdrawn fields keep their data.
func migrate(ctx context.Context, db contracts.Database, types contracts.ColumnTypes, def Collection) error {
	table, err := contracts.QuoteIdent(Table(def.Name))
	if err != nil {
		return err
	}
	return db.Tx(ctx, func(tx contracts.Querier) error {
		cols, err := tx.Columns(ctx, Table(def.Name))
		if err != nil {
			return err
		}
		if len(cols) == 0 {
			ddl, err := createSQL(table, types, def)
			if err != nil {
				return err
			}
			return tx.Exec(ctx, ddl)
		}
		m := migration{tx: tx, table: table, types: types}
		for _, f := range def.Fields {
			if !slices.Contains(cols, f.Name) {
				if err := m.addColumn(ctx, f); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

func createSQL(table string, types contracts.ColumnTypes, def Collection) (string, error) {
	names := []string{ColumnID, ColumnCreatedAt, ColumnUpdatedAt}
	kinds := []string{types.ID, types.Text + " NOT NULL", types.Text + " NOT NULL"}
	for _, f := range def.Fields {
		names, kinds = append(names, f.Name), append(kinds, columnType(types, f.Type))
	}
	quoted, err := quoteAll(names)
	if err != nil {
		return "", err
	}
	for i := range quoted {
		quoted[i] += " " + kinds[i]
	}
	return "CREATE TABLE IF NOT EXISTS " + table + " (" + strings.Join(quoted, ", ") + ")", nil
}

// migration is one table's migration, inside its transaction.
type migration struct {
	tx    contracts.Querier
	table string // quoted
	types contracts.ColumnTypes
}

// addColumn adds f's column and fills the rows already there with f's default.
func (m migration) addColumn(ctx context.Context, f Field) error {
	col, err := contracts.QuoteIdent(f.Name)
	if err != nil {
		return err
	}
	if err := m.tx.Exec(ctx, "ALTER TABLE "+m.table+" ADD COLUMN "+col+" "+columnType(m.types, f.Type)); err != nil {
		return fmt.Errorf("add field %q: %w", f.Name, err)
	}
	if f.Default == nil {
		return nil
	}
	def, err := toArg(f, f.Default)
	if err != nil {
		return err
	}
	if _, err := m.tx.Query(ctx, "UPDATE "+m.table+" SET "+col+" = ? WHERE "+col+" IS NULL", def); err != nil {
		return fmt.Errorf("fill field %q with its default: %w", f.Name, err)
	}
	return nil
}

func columnType(types contracts.ColumnTypes, t FieldType) string {
	switch t {
	case TypeInteger:
		return types.BigInt
	case TypeReal:
		return types.Double
	case TypeBoolean:
		return types.Boolean
	}
	return types.Text // text and json
}

// record converts a result row to a Record of def.
func record(def Collection, row contracts.Row) Record {
	rec := Record{
		ColumnID:        fromColumn(Field{Type: TypeInteger}, row[ColumnID]),
		ColumnCreatedAt: fromColumn(Field{Type: TypeText}, row[ColumnCreatedAt]),
		ColumnUpdatedAt: fromColumn(Field{Type: TypeText}, row[ColumnUpdatedAt]),
	}
	for _, f := range def.Fields {
		rec[f.Name] = fromColumn(f, row[f.Name])
	}
	return rec
}

// stamp returns the current time as stored in created_at and updated_at.
func (s *service) stamp() string { return s.now().UTC().Format(timeLayout) }
