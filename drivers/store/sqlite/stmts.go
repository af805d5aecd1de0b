package sqlite

import (
	"container/list"
	"context"
	"database/sql"
	"sync"
)

// Bounds of the statement cache: how many prepared statements it keeps, and
// the longest text it keeps one for (longer ones are prepared each time, so
// one caller's huge generated statements cannot hold the kernel's memory).
const (
	maxCachedStmts   = 128
	maxCachedStmtLen = 8 << 10
)

// stmtCache keeps the statements run most recently prepared, so a repeated
// query skips SQLite's parser and planner, which cost a small read more than
// running it. Entries are counted while in use: an evicted statement closes
// when its last user releases it, never under a running query.
type stmtCache struct {
	mu     sync.Mutex
	order  *list.List // of *stmtEntry, most recently used first
	byText map[string]*list.Element
	closed bool
}

type stmtEntry struct {
	text    string
	stmt    *sql.Stmt
	refs    int
	evicted bool
}

func newStmtCache() *stmtCache {
	return &stmtCache{order: list.New(), byText: map[string]*list.Element{}}
}

// acquire returns the prepared statement for text, preparing it on db if it
// is not cached, or nil when text is too long to cache. The caller runs it
// and then calls release.
func (c *stmtCache) acquire(ctx context.Context, db *sql.DB, text string) (*stmtEntry, error) {
	if len(text) > maxCachedStmtLen {
		return nil, nil
	}
	if e := c.hit(text); e != nil {
		return e, nil
	}
	// Prepared outside the lock: preparing waits for the connection, and
	// the lock must never be held while anything waits for it.
	stmt, err := db.PrepareContext(ctx, text)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if _, ok := c.byText[text]; ok || c.closed {
		// Another caller cached it meanwhile, or the database closed: use
		// this one once.
		c.mu.Unlock()
		return &stmtEntry{text: text, stmt: stmt, refs: 1, evicted: true}, nil
	}
	e := &stmtEntry{text: text, stmt: stmt, refs: 1}
	c.byText[text] = c.order.PushFront(e)
	var drop []*stmtEntry
	for c.order.Len() > maxCachedStmts {
		drop = append(drop, c.evict(c.order.Back())...)
	}
	c.mu.Unlock()
	closeAll(drop)
	return e, nil
}

// hit returns the cached entry for text, counted as in use, or nil.
func (c *stmtCache) hit(text string) *stmtEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byText[text]
	if !ok {
		return nil
	}
	c.order.MoveToFront(el)
	e := el.Value.(*stmtEntry)
	e.refs++
	return e
}

// release ends one use of e, closing it if it was evicted meanwhile.
func (c *stmtCache) release(e *stmtEntry) {
	c.mu.Lock()
	e.refs--
	last := e.evicted && e.refs == 0
	c.mu.Unlock()
	if last {
		_ = e.stmt.Close() // a statement that fails to close has nothing left to lose
	}
}

// evict removes el and returns its entry if nobody uses it, for the caller
// to close outside the lock; c.mu is held.
func (c *stmtCache) evict(el *list.Element) []*stmtEntry {
	e := c.order.Remove(el).(*stmtEntry)
	delete(c.byText, e.text)
	e.evicted = true
	if e.refs == 0 {
		return []*stmtEntry{e}
	}
	return nil
}

// close evicts every entry; statements still in use close on release.
func (c *stmtCache) close() {
	c.mu.Lock()
	c.closed = true
	var drop []*stmtEntry
	for c.order.Len() > 0 {
		drop = append(drop, c.evict(c.order.Back())...)
	}
	c.mu.Unlock()
	closeAll(drop)
}

func closeAll(es []*stmtEntry) {
	for _, e := range es {
		_ = e.stmt.Close() // see release
	}
}
