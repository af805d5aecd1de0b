package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sms-baseline/sms/contracts"
)

// accounted runs an agent plugin's job as a one-step run of the kernel's
// budgets (contracts.BudgetKey), claimed for the job's name and due time:
// a plugin, a user or a tenant over budget has the job refused, with the
// reason as its error, before its code runs. System plugins' jobs, and
// jobs on a kernel without budgets, just run.
func (s *service) accounted(ctx context.Context, e entry, now time.Time, job func() error) error {
	var b contracts.Budgets
	if s.budgets != nil && !s.system(e.plugin) {
		b = s.budgets()
	}
	if b == nil {
		return job()
	}
	w := contracts.Work{ID: fmt.Sprintf("job %s at %d", e.job.Name, now.UnixMilli()), Agent: e.plugin, User: s.requester(e.plugin), Steps: 1}
	run, err := b.Begin(ctx, w)
	if err != nil {
		return err
	}
	if err := run.Next(ctx); err != nil {
		return err
	}
	jobErr := job()
	var failed string
	if jobErr != nil {
		failed = jobErr.Error()
	}
	return errors.Join(jobErr, run.Record(ctx, contracts.StepUse{Kind: "job", Name: e.job.Name, Failed: failed}))
}
