package orm

import (
	"context"
	"fmt"

	"github.com/sms-baseline/sms/kernel"
)

// cost is what a create's or write's values would write: rows of models
// (the records themselves, and those x2many commands create, update,
// delete or move) and join rows of many2many fields.
type cost struct{ rows, links int }

// costOf counts what p writes on parents records, before any transaction
// starts. A set counts the links it makes, not those it replaces.
func costOf(p *prepared, parents int) cost {
	c := cost{rows: parents}
	for _, x := range p.x2m {
		var per cost
		for _, cmd := range x.cmds {
			per = per.add(commandCost(x.f, cmd))
		}
		c.rows += parents * per.rows
		c.links += parents * per.links
	}
	return c
}

func (c cost) add(o cost) cost { return cost{rows: c.rows + o.rows, links: c.links + o.links} }

// commandCost is what one command writes for one parent record.
func commandCost(f *field, c command) cost {
	m2m := f.Kind == KindMany2Many
	switch c.op {
	case CmdSet:
		if m2m {
			return cost{links: len(c.ids)}
		}
		return cost{rows: len(c.ids)}
	case CmdLink, CmdUnlink:
		if m2m {
			return cost{links: 1}
		}
		return cost{rows: 1}
	case CmdCreate:
		if m2m {
			return cost{rows: 1, links: 1}
		}
	}
	return cost{rows: 1}
}

// checkCost refuses a create or write past MaxJoinRows or MaxWriteRows,
// before its hooks run and its transaction starts.
func checkCost(m *model, p *prepared, op Event, parents int) error {
	c := costOf(p, parents)
	if c.links > MaxJoinRows {
		return errorf(ErrInvalid, at{m.name, ""}, "the %s would insert or delete %d join rows; the limit is %d (records times links)",
			op, c.links, MaxJoinRows)
	}
	if total := c.rows + c.links; total > MaxWriteRows {
		return errorf(ErrInvalid, at{m.name, ""}, "the %s would write %d rows; the limit is %d", op, total, MaxWriteRows)
	}
	return nil
}

// checkUnlinkIDs refuses an unlink of more than MaxWriteRows records
// before anything is read; its cascades are bounded by MaxCascade.
func checkUnlinkIDs(m *model, ids []int64) error {
	if len(ids) > MaxWriteRows {
		return errorf(ErrInvalid, at{m.name, ""}, "the unlink names %d records; the limit is %d", len(ids), MaxWriteRows)
	}
	return nil
}

// alive returns why an operation must stop: its context ended (a caller
// gone, or a host call's deadline passed), so the transaction it runs in
// rolls back.
func alive(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("stopped: %w", err)
	}
	return nil
}

// spent charges what a write wrote, rows and join rows, to the agent
// plugin whose service call it serves (kernel.Spend; nothing outside one).
func (s *service) spent(ctx context.Context, c cost) {
	if s.spend != nil && c.rows+c.links > 0 {
		s.spend(ctx, kernel.Use{Rows: int64(c.rows + c.links)})
	}
}
