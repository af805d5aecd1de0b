package adminapi

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sms-baseline/sms/kernel"
	"github.com/sms-baseline/sms/plugins/adminapi/adminv1"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// versionsPage is how many events one read of the log takes while
// folding a plugin's versions.
const versionsPage = 1000

// installed is what versions reads of plugin/installed and
// plugin/mounted events.
type installed struct {
	Manifest    struct{ Version string } `json:"manifest"`
	CodeHash    string                   `json:"codeHash"`
	Staged      bool                     `json:"staged"`
	RequestedBy string                   `json:"requestedBy"`
}

// history folds the log into the versions of plugin id that were
// installed (a staged install counts once its mount committed), newest
// last, at most adminv1.MaxVersions of them.
func (a *admin) history(ctx context.Context, id string) ([]adminv1.PluginVersion, error) {
	var out []adminv1.PluginVersion
	staged := map[string]adminv1.PluginVersion{}
	for after := int64(0); ; {
		events, err := a.k.Events(ctx, after, versionsPage)
		if err != nil {
			return nil, err
		}
		for _, e := range events {
			after = e.Seq
			if e.Plugin != id || (e.Type != kernel.EventPluginInstalled && e.Type != kernel.EventPluginMounted) {
				continue
			}
			var d installed
			if json.Unmarshal(e.Data, &d) != nil || d.CodeHash == "" {
				continue
			}
			v := adminv1.PluginVersion{Version: d.Manifest.Version, CodeHash: d.CodeHash, RequestedBy: d.RequestedBy, Time: e.Time}
			switch {
			case e.Type == kernel.EventPluginMounted:
				if s, ok := staged[d.CodeHash]; ok {
					out = append(out, withTime(s, e.Time))
				}
			case d.Staged:
				staged[d.CodeHash] = v
			default:
				out = append(out, v)
			}
		}
		if len(events) < versionsPage {
			break
		}
	}
	if len(out) > adminv1.MaxVersions {
		out = out[len(out)-adminv1.MaxVersions:]
	}
	return out, nil
}

func withTime(v adminv1.PluginVersion, t time.Time) adminv1.PluginVersion {
	v.Time = t
	return v
}

// versions answers the versions of an agent plugin the kernel installed.
func (a *admin) versions(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	id := r.Params["id"]
	out, err := a.history(ctx, id)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, smshttp.NewError(smshttp.KindNotFound, fmt.Sprintf("plugin %s: no agent plugin with this id was ever installed", id))
	}
	return answer(adminv1.PluginVersions{Versions: out}), nil
}

// versionCode answers the code of one of those versions, by its hash.
func (a *admin) versionCode(ctx context.Context, r *smshttp.Request) (*smshttp.Response, error) {
	id, hash := r.Params["id"], r.Params["hash"]
	out, err := a.history(ctx, id)
	if err != nil {
		return nil, err
	}
	for _, v := range out {
		if v.CodeHash != hash {
			continue
		}
		code, err := a.k.Code(ctx, hash)
		if err != nil {
			return nil, err
		}
		return answer(adminv1.PluginVersionCode{PluginVersion: v, Code: string(code)}), nil
	}
	return nil, smshttp.NewError(smshttp.KindNotFound, fmt.Sprintf("plugin %s: no installed version has code %s (the last %d versions are kept)", id, hash, adminv1.MaxVersions))
}
