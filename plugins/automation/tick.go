package automation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sms-baseline/sms/plugins/orm"
	"github.com/sms-baseline/sms/plugins/scheduler"
)

const timeLayout = "2006-01-02T15:04:05.000Z07:00"

func (s *service) migrate(ctx context.Context) error {
	t, err := s.db.Dialect().Types()
	if err != nil {
		return err
	}
	ddl := fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (name %s PRIMARY KEY, last_run %s NOT NULL, last_error %s NOT NULL)`,
		RunsTable, t.Text, t.Text, t.Text)
	if err := s.db.Exec(ctx, ddl); err != nil {
		return fmt.Errorf("automation runs table: %w", err)
	}
	return nil
}

// lastRun is a periodic automation's last run, nil when it never ran.
func (s *service) lastRun(ctx context.Context, name string) (*time.Time, error) {
	rows, err := s.db.Query(ctx, `SELECT last_run FROM `+RunsTable+` WHERE name = ?`, name)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	text, _ := rows[0]["last_run"].(string)
	t, err := time.Parse(timeLayout, text)
	if err != nil {
		return nil, fmt.Errorf("automation %s: last run %q: %w", name, text, err)
	}
	return &t, nil
}

func (s *service) record(ctx context.Context, name string, now time.Time, runErr error) error {
	msg := ""
	if runErr != nil {
		msg = runErr.Error()
	}
	_, err := s.db.Query(ctx, `INSERT INTO `+RunsTable+` (name, last_run, last_error) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET last_run = excluded.last_run, last_error = excluded.last_error`,
		name, now.UTC().Format(timeLayout), msg)
	return err
}

// tick runs every periodic automation that is due at run.Now: never run,
// or its interval passed since its last run. Each run is recorded as it
// ends, so a restart neither repeats nor skips one.
func (s *service) tick(ctx context.Context, run scheduler.Run) error {
	var errs []error
	for _, l := range s.periodic() {
		last, err := s.lastRun(ctx, l.a.Name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		every := time.Duration(l.a.EveryMinutes) * time.Minute
		if last != nil && run.Now.Sub(*last) < every {
			continue
		}
		runErr := s.periodicRun(ctx, l, run.Now)
		if err := s.record(context.WithoutCancel(ctx), l.a.Name, run.Now, runErr); err != nil {
			errs = append(errs, fmt.Errorf("automation %s: record its run: %w", l.a.Name, err))
		}
		if runErr != nil {
			errs = append(errs, fmt.Errorf("automation %s (plugin %s): %w", l.a.Name, l.plugin, runErr))
		}
	}
	return errors.Join(errs...)
}

func (s *service) periodic() []*live {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*live
	for _, l := range s.live {
		if l.a.Trigger == OnTime {
			out = append(out, l)
		}
	}
	return out
}

// periodicRun acts on the records matching the filter.
func (s *service) periodicRun(ctx context.Context, l *live, now time.Time) error {
	ctx, done, err := s.acting(ctx, l, orm.OpContext{})
	defer done()
	if err == nil {
		err = s.periodicAct(ctx, l, now)
	}
	if err != nil {
		l.fail(err, now)
		return err
	}
	l.st.mu.Lock()
	defer l.st.mu.Unlock()
	l.st.status.Runs++
	l.st.status.LastError = ""
	l.st.status.LastRun = &now
	return nil
}

// periodicAct runs l's action on the records its filter matches.
func (s *service) periodicAct(ctx context.Context, l *live, now time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	ctx = context.WithValue(ctx, chainKey{}, []string{l.a.Name})
	ids, err := s.orm.Search(ctx, l.a.Model, l.a.Filter, orm.SearchOptions{Limit: MaxRecords})
	if err == nil && len(ids) > 0 {
		err = s.act(ctx, l, Event{Automation: l.a.Name, Model: l.a.Model, Trigger: OnTime, IDs: ids, Now: now})
	}
	return err
}
