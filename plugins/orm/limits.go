package orm

// Bounds of what one call may ask of the ORM. A call past one is refused
// before it touches the database, with an *Error wrapping ErrInvalid (a
// 400 over REST) whose message names the bound; only ErrBusy (a 429 too_many)
// says to try again shortly. They hold for system code, REST callers and agent
// code alike, so no caller's request can take the kernel's CPU, memory or
// database for long.
const (
	// MaxPathHops is how many relations one domain term's path may cross
	// (partner.country.code crosses 2), related fields' paths included.
	MaxPathHops = 8
	// MaxDomainJoins is how many relations one compiled query may cross in
	// all: every hop of every term, the guard's domains included.
	MaxDomainJoins = 256
	// MaxQueryBytes is the size of the SQL text a domain may compile to.
	MaxQueryBytes = 256 << 10
	// MaxSpecFields is how many fields a read spec may name in all, its
	// nested specs included.
	MaxSpecFields = 1000
	// MaxReadBytes is the estimated size of one answer of Read (and of a
	// search with a spec), counting a record each time it appears, as
	// JSON would.
	MaxReadBytes = 16 << 20
	// DefaultReadBudget is Options.ReadBudget's default: the estimated
	// bytes all reads in flight may hold at once, shared by every caller.
	DefaultReadBudget = 128 << 20
	// MaxJoinRows is how many join rows of many2many fields one create
	// or write may insert or delete through its commands: records times
	// links.
	MaxJoinRows = 10_000
	// MaxWriteRows is how many rows one create, write or unlink may write
	// in its transaction: the records it updates and the rows its x2many
	// commands insert, update, delete or link.
	MaxWriteRows = 10_000
	// MaxGroupBy is how many entries a read_group's groupBy may hold.
	MaxGroupBy = 8
	// MaxAggregates is how many aggregates a read_group may ask for.
	MaxAggregates = 32
	// MaxGroupCells bounds groupBy entries times aggregates, the columns
	// of each group an answer repeats.
	MaxGroupCells = 128
)
