package judge

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sms-baseline/sms/kernel"
)

// Payloads of the judge's audit events.
type (
	submittedEvent struct {
		Version     string `json:"version"`
		CodeHash    string `json:"codeHash"`
		RequestedBy string `json:"requestedBy"`
	}
	verdictEvent struct {
		Version  string `json:"version"`
		CodeHash string `json:"codeHash"`
		Gate     string `json:"gate"`
		Reason   string `json:"reason"`
		Restored string `json:"restored,omitempty"`
	}
	decisionEvent struct {
		ApprovalID string   `json:"approvalId"`
		CodeHash   string   `json:"codeHash"`
		DecidedBy  string   `json:"decidedBy"`
		Reasons    []string `json:"reasons,omitempty"`
	}
	mountedEvent struct {
		Version    string `json:"version"`
		CodeHash   string `json:"codeHash"`
		Key        string `json:"key"`
		ApprovalID string `json:"approvalId,omitempty"`
	}
)

// record appends an audit event; its failure fails the operation, so the
// log never misses a decision the judge acted on.
func (s *epoch) record(ctx context.Context, typ, plugin string, data any) error {
	if err := s.api.Record(ctx, typ, plugin, data); err != nil {
		return fmt.Errorf("record %s: %w", typ, err)
	}
	return nil
}

// readPage is how many events fold and readAll read per call to the log.
const readPage = 1000

func readAll(ctx context.Context, k *kernel.Kernel) ([]kernel.Event, error) {
	var all []kernel.Event
	for after := int64(0); ; {
		page, err := k.Events(ctx, after, readPage)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if len(page) < readPage {
			return all, nil
		}
		after = page[len(page)-1].Seq
	}
}

// fold rebuilds the judge's state from its events: the approvals still
// pending, and what it mounted last per plugin.
func fold(ctx context.Context, k *kernel.Kernel) (map[string]Approval, map[string]string, error) {
	events, err := readAll(ctx, k)
	if err != nil {
		return nil, nil, fmt.Errorf("read the judge's events: %w", err)
	}
	pending, mounted := map[string]Approval{}, map[string]string{}
	for _, e := range events {
		switch e.Type {
		case EventPending:
			var a Approval
			if err := json.Unmarshal(e.Data, &a); err != nil {
				return nil, nil, fmt.Errorf("fold event %d (%s): %w", e.Seq, e.Type, err)
			}
			// One pending approval per plugin: a log written before
			// submissions superseded their plugin's every approval may
			// hold several, and only the newest stays.
			for id, old := range pending {
				if old.PluginID == a.PluginID {
					delete(pending, id)
				}
			}
			pending[a.ID] = a
		case EventVoted:
			var v votedEvent
			if err := json.Unmarshal(e.Data, &v); err != nil {
				return nil, nil, fmt.Errorf("fold event %d (%s): %w", e.Seq, e.Type, err)
			}
			if a, ok := pending[v.ApprovalID]; ok && a.CodeHash == v.CodeHash {
				a.Decisions = append(a.Decisions, v.Decision)
				pending[v.ApprovalID] = a
			}
		case EventApproved, EventDenied, EventSuperseded:
			var d decisionEvent
			if err := json.Unmarshal(e.Data, &d); err != nil {
				return nil, nil, fmt.Errorf("fold event %d (%s): %w", e.Seq, e.Type, err)
			}
			delete(pending, d.ApprovalID)
		case EventMounted:
			var mnt mountedEvent
			if err := json.Unmarshal(e.Data, &mnt); err != nil {
				return nil, nil, fmt.Errorf("fold event %d (%s): %w", e.Seq, e.Type, err)
			}
			mounted[e.Plugin] = mnt.Key
		case EventRolledBack, kernel.EventPluginUninstalled:
			delete(mounted, e.Plugin)
		}
	}
	return pending, mounted, nil
}
