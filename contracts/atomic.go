package contracts

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// Atomic runs fn in one transaction of db and hands fn a context that
// carries it. Every Database made by Ambient over the same db joins that
// transaction when it is given that context (or one derived from it), so
// code that knows nothing of the transaction (another plugin's queries, a
// hook, a guard) takes part in it: its statements commit or roll back with
// the rest. It commits when fn returns nil and rolls back when fn returns
// an error or panics.
//
// Atomic inside Atomic on the same db is a savepoint: an error from the
// inner fn undoes only what the inner fn did, and the outer one decides.
// Tx on an Ambient database inside Atomic is a savepoint too.
//
// Inside fn, use only Ambient databases: the plain db may be blocked until
// the transaction ends (SQLite has one connection), so using it can
// deadlock. Statements through the shared transaction are serialised, so
// goroutines started by fn with its context may query concurrently, and
// so are savepoints: one started while another is open waits for it to
// end, unless it is nested in it (started with the context the open one
// handed its function), so a rollback to one savepoint never undoes
// another's statements.
func Atomic(ctx context.Context, db Database, fn func(ctx context.Context) error) error {
	inner := base(db)
	if a := current(ctx, inner); a != nil {
		return a.savepoint(ctx, fn)
	}
	a := &ambientTx{db: inner, sp: make(chan struct{}, 1)}
	err := func() error {
		defer a.end()
		return inner.Tx(ctx, func(tx Querier) error {
			a.tx = tx
			return fn(context.WithValue(ctx, ambientKey{}, a))
		})
	}()
	if err != nil {
		return err
	}
	for _, f := range a.after {
		f.fn()
	}
	return nil
}

// AfterCommit runs fn once the outermost Atomic transaction ctx carries
// has committed, in the order the calls were made, and never when it
// rolls back (or when the savepoint that registered fn rolls back). Outside
// Atomic it runs fn at once. It is how a write's after-effects (hooks that
// run "once the write is committed") wait for the batch the write is part
// of.
func AfterCommit(ctx context.Context, fn func()) {
	a, _ := ctx.Value(ambientKey{}).(*ambientTx)
	if a == nil || !a.open() {
		fn()
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.after = append(a.after, after{fn: fn, in: framesOf(ctx, a)})
}

// InAtomic reports whether ctx carries an open Atomic transaction.
func InAtomic(ctx context.Context) bool {
	a, _ := ctx.Value(ambientKey{}).(*ambientTx)
	return a != nil && a.open()
}

// Ambient returns db made aware of Atomic: given a context that carries an
// open Atomic transaction of the same database, its Exec, Query and
// Columns run in that transaction and its Tx is a savepoint of it;
// otherwise they are db's own. Ambient of an Ambient database is that
// database.
func Ambient(db Database) Database {
	if a, ok := db.(ambientDB); ok {
		return a
	}
	return ambientDB{db}
}

type ambientKey struct{}

// ambientTx is one Atomic transaction.
type ambientTx struct {
	db Database // the database it is a transaction of, never an ambientDB

	mu     sync.Mutex // serialises the use of tx, which is not safe for concurrent use
	tx     Querier
	closed bool
	seq    int
	after  []after
	sp     chan struct{} // held by the outermost open savepoint
}

// after is a function AfterCommit registered, with the savepoints it was
// registered in (their ids), so that rolling one back drops it.
type after struct {
	fn func()
	in []int
}

// frameKey carries the savepoint a context was handed inside.
type frameKey struct{}

// frame is an open savepoint.
type frame struct {
	tx     *ambientTx
	id     int
	parent *frame
}

// framesOf is the ids of the savepoints of a that ctx was handed inside.
func framesOf(ctx context.Context, a *ambientTx) []int {
	var ids []int
	f, _ := ctx.Value(frameKey{}).(*frame)
	for ; f != nil; f = f.parent {
		if f.tx == a {
			ids = append(ids, f.id)
		}
	}
	return ids
}

func (a *ambientTx) open() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return !a.closed
}

func (a *ambientTx) end() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
}

// base is the database an ambientDB wraps, or db itself.
func base(db Database) Database {
	if a, ok := db.(ambientDB); ok {
		return a.Database
	}
	return db
}

// current is the open Atomic transaction of db that ctx carries, if any.
func current(ctx context.Context, db Database) *ambientTx {
	a, _ := ctx.Value(ambientKey{}).(*ambientTx)
	if a == nil || !same(a.db, db) || !a.open() {
		return nil
	}
	return a
}

// same compares two databases; a value whose type cannot be compared is
// never the same as anything.
func same(a, b Database) (eq bool) {
	defer func() {
		if recover() != nil {
			eq = false
		}
	}()
	return a == b
}

// savepoint runs fn inside a savepoint of a: an error or panic rolls back
// what fn did (and drops what it registered with AfterCommit). Savepoints
// that are not nested take turns.
func (a *ambientTx) savepoint(ctx context.Context, fn func(ctx context.Context) error) (err error) {
	if len(framesOf(ctx, a)) == 0 {
		select {
		case a.sp <- struct{}{}:
			defer func() { <-a.sp }()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	a.mu.Lock()
	a.seq++
	id := a.seq
	a.mu.Unlock()
	name := fmt.Sprintf("sms_sp_%d", id)
	if err := a.exec(ctx, "SAVEPOINT "+name); err != nil {
		return err
	}
	parent, _ := ctx.Value(frameKey{}).(*frame)
	inner := context.WithValue(ctx, frameKey{}, &frame{tx: a, id: id, parent: parent})
	undo := func() error {
		a.mu.Lock()
		a.after = slices.DeleteFunc(a.after, func(f after) bool { return slices.Contains(f.in, id) })
		a.mu.Unlock()
		return a.exec(ctx, "ROLLBACK TO SAVEPOINT "+name+"; RELEASE SAVEPOINT "+name)
	}
	defer func() {
		if p := recover(); p != nil {
			_ = undo()
			panic(p)
		}
	}()
	if err := fn(inner); err != nil {
		if uerr := undo(); uerr != nil {
			return fmt.Errorf("%w (and rolling back savepoint %s failed: %w)", err, name, uerr)
		}
		return err
	}
	return a.exec(ctx, "RELEASE SAVEPOINT "+name)
}

func (a *ambientTx) exec(ctx context.Context, sql string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.tx.Exec(ctx, sql)
}

func (a *ambientTx) query(ctx context.Context, sql string, args []any) ([]Row, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.tx.Query(ctx, sql, args...)
}

func (a *ambientTx) columns(ctx context.Context, table string) ([]string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.tx.Columns(ctx, table)
}

// ambientDB is a Database that joins the Atomic transaction its context
// carries.
type ambientDB struct{ Database }

func (d ambientDB) Exec(ctx context.Context, sql string) error {
	if a := current(ctx, d.Database); a != nil {
		return a.exec(ctx, sql)
	}
	return d.Database.Exec(ctx, sql)
}

func (d ambientDB) Query(ctx context.Context, sql string, args ...any) ([]Row, error) {
	if a := current(ctx, d.Database); a != nil {
		return a.query(ctx, sql, args)
	}
	return d.Database.Query(ctx, sql, args...)
}

func (d ambientDB) Columns(ctx context.Context, table string) ([]string, error) {
	if a := current(ctx, d.Database); a != nil {
		return a.columns(ctx, table)
	}
	return d.Database.Columns(ctx, table)
}

// Tx is a savepoint of the Atomic transaction ctx carries, else db's Tx.
func (d ambientDB) Tx(ctx context.Context, fn func(tx Querier) error) error {
	if a := current(ctx, d.Database); a != nil {
		return a.savepoint(ctx, func(context.Context) error { return fn(joined{a: a}) })
	}
	return d.Database.Tx(ctx, fn)
}

// joined is the Querier a savepoint's Tx callback gets.
type joined struct{ a *ambientTx }

func (j joined) Exec(ctx context.Context, sql string) error { return j.a.exec(ctx, sql) }
func (j joined) Query(ctx context.Context, sql string, args ...any) ([]Row, error) {
	return j.a.query(ctx, sql, args)
}
func (j joined) Columns(ctx context.Context, table string) ([]string, error) {
	return j.a.columns(ctx, table)
}
