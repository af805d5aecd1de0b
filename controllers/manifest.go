package controllers

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	smsv1 "github.com/sms-baseline/sms/api/v1"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
)

// manifestOf is the kernel manifest the Plugin's spec describes.
func manifestOf(p *smsv1.Plugin) (adminv1.Manifest, error) {
	m := adminv1.Manifest{ID: p.Spec.ID, Version: p.Spec.Version, Description: p.Spec.Description,
		Inject: p.Spec.Inject, Optional: p.Spec.Optional, Provide: p.Spec.Provide, Scopes: p.Spec.Scopes, Points: p.Spec.Points}
	if len(p.Spec.Contributes) > 0 {
		m.Contributes = map[string][]any{}
		for point, items := range p.Spec.Contributes {
			m.Contributes[point] = []any{} // an empty list still declares the point
			for _, item := range items {
				var v any
				if err := json.Unmarshal(item.Raw, &v); err != nil {
					return m, fmt.Errorf("spec.contributes[%s]: %w", point, err)
				}
				m.Contributes[point] = append(m.Contributes[point], v)
			}
		}
	}
	return m, nil
}

// submissionID identifies a submission (manifest and code) so the same
// one is never submitted twice.
func submissionID(p adminv1.Plugin) string {
	raw, _ := json.Marshal(p)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:16])
}
