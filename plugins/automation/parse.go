package automation

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/orm"
)

var namePattern = regexp.MustCompile(`^[a-z][a-z0-9_.-]*$`)

// parse reads an item: an Automation from a system plugin, or the JSON
// shape whose action's handler is an agent plugin's function.
func parse(item any) (Automation, error) {
	const shape = "an automation is {name, model, trigger, watch?, filter?, everyMinutes?, action: {kind, method?, args?, values?, body?, handler?}}"
	switch it := item.(type) {
	case Automation:
		return it, nil
	case *Automation:
		if it == nil {
			return Automation{}, fmt.Errorf("%s, got a nil *Automation", shape)
		}
		return *it, nil
	case map[string]any:
		var fn kernel.Func
		if act, ok := it["action"].(map[string]any); ok {
			if f, ok := act["handler"].(kernel.Func); ok {
				fn = f
			} else if act["handler"] != nil {
				return Automation{}, fmt.Errorf("%s: action.handler must be a function", shape)
			}
			act = maps.Clone(act)
			delete(act, "handler")
			it = maps.Clone(it)
			it["action"] = act
		}
		a, err := kernel.ItemAs[Automation](it, shape)
		if err != nil {
			return a, err
		}
		if fn != nil {
			a.Action.Handler = agentHandler(fn)
		}
		return a, nil
	}
	return kernel.ItemAs[Automation](item, shape)
}

// agentHandler adapts an agent plugin's function: the event crosses as a
// JSON snapshot and a thrown error is the run's failure.
func agentHandler(fn kernel.Func) Handler {
	return func(ctx context.Context, e Event) error {
		raw, err := json.Marshal(e)
		if err != nil {
			return err
		}
		var snap any
		if err := json.Unmarshal(raw, &snap); err != nil {
			return err
		}
		_, err = fn(ctx, snap)
		return err
	}
}

// check validates a against the ORM: the model, watched fields, filter and
// action. system says whether a system plugin contributes it.
func (s *service) check(a Automation, system bool) error {
	name := a.Name
	switch {
	case len(name) > MaxNameLen || !namePattern.MatchString(name):
		return fmt.Errorf("automation name %q must be a lowercase letter followed by lowercase letters, digits, _, . or -, at most %d characters", name, MaxNameLen)
	case a.Sudo && !system:
		return fmt.Errorf("automation %s: only a system plugin's automation may run as sudo", name)
	case a.Trigger == OnUnlink && !system:
		return fmt.Errorf("automation %s: an agent plugin's automation cannot run on unlink: the records are gone, so whether its requester may read them cannot be checked", name)
	}
	spec, err := s.orm.Spec(a.Model)
	if err != nil {
		return fmt.Errorf("automation %s: unknown model %q", name, a.Model)
	}
	if err := checkTrigger(a, spec); err != nil {
		return err
	}
	if a.Filter != nil {
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
		defer cancel()
		if _, err := s.orm.Search(orm.Sudo(ctx), a.Model, a.Filter, orm.SearchOptions{Limit: 1}); err != nil {
			return fmt.Errorf("automation %s: filter: %w", name, err)
		}
	}
	return checkAction(a, spec)
}

func hasField(spec orm.ModelSpec, name string) bool {
	return slices.ContainsFunc(spec.Fields, func(f orm.FieldSpec) bool { return f.Name == name })
}

func checkTrigger(a Automation, spec orm.ModelSpec) error {
	switch a.Trigger {
	case OnCreate, OnUnlink:
	case OnWrite:
		for _, f := range a.Watch {
			if !hasField(spec, f) {
				return fmt.Errorf("automation %s: model %s has no field %q to watch", a.Name, a.Model, f)
			}
		}
	case OnTime:
		if a.EveryMinutes < MinEveryMinutes || a.EveryMinutes > MaxEveryMinutes {
			return fmt.Errorf("automation %s: everyMinutes %d must be from %d to %d", a.Name, a.EveryMinutes, MinEveryMinutes, MaxEveryMinutes)
		}
	default:
		return fmt.Errorf("automation %s: trigger %q is not one of create, write, unlink, time", a.Name, a.Trigger)
	}
	if len(a.Watch) > 0 && a.Trigger != OnWrite {
		return fmt.Errorf("automation %s: watch applies to the write trigger only", a.Name)
	}
	if a.EveryMinutes != 0 && a.Trigger != OnTime {
		return fmt.Errorf("automation %s: everyMinutes applies to the time trigger only", a.Name)
	}
	return nil
}

func checkAction(a Automation, spec orm.ModelSpec) error {
	act := a.Action
	if a.Trigger == OnUnlink && act.Kind != ActHandler {
		return fmt.Errorf("automation %s: on unlink the records are gone, so only a handler action applies", a.Name)
	}
	switch act.Kind {
	case ActMethod:
		if act.Method == "" {
			return fmt.Errorf("automation %s: a method action names the method", a.Name)
		}
	case ActWrite:
		if len(act.Values) == 0 {
			return fmt.Errorf("automation %s: a write action needs values", a.Name)
		}
		for f := range act.Values {
			if !hasField(spec, f) {
				return fmt.Errorf("automation %s: model %s has no field %q to write", a.Name, a.Model, f)
			}
		}
	case ActNote:
		if act.Body == "" {
			return fmt.Errorf("automation %s: a note action needs a body", a.Name)
		}
	case ActHandler:
		if act.Handler == nil {
			return fmt.Errorf("automation %s: a handler action needs a handler function", a.Name)
		}
	default:
		return fmt.Errorf("automation %s: action kind %q is not one of method, write, note, handler", a.Name, act.Kind)
	}
	return nil
}
