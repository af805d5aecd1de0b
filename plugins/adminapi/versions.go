package adminapi

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
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

// versionIndex is every agent plugin's committed versions, folded from
// the log once and then from where the last fold stopped: a request reads
// only the events appended since the last one, and one fold runs at a
// time.
type versionIndex struct {
	mu     sync.Mutex
	after  int64
	byID   map[string][]adminv1.PluginVersion
	staged map[string]adminv1.PluginVersion // by plugin id and code hash
}

// history returns the versions of plugin id the kernel committed (a staged
// install counts once its mount committed), oldest first, at most
// adminv1.MaxVersions of them.
func (a *admin) history(ctx context.Context, id string) ([]adminv1.PluginVersion, error) {
	x := &a.versionIdx
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.byID == nil {
		x.byID, x.staged = map[string][]adminv1.PluginVersion{}, map[string]adminv1.PluginVersion{}
	}
	for {
		events, err := a.k.Events(ctx, x.after, versionsPage)
		if err != nil {
			return nil, err
		}
		for _, e := range events {
			x.after = e.Seq
			x.fold(e)
		}
		if len(events) < versionsPage {
			return slices.Clone(x.byID[id]), nil
		}
	}
}

// fold takes one event into the index.
func (x *versionIndex) fold(e kernel.Event) {
	if e.Type != kernel.EventPluginInstalled && e.Type != kernel.EventPluginMounted && e.Type != kernel.EventPluginAborted {
		return
	}
	var d installed
	if json.Unmarshal(e.Data, &d) != nil || d.CodeHash == "" {
		return
	}
	key := e.Plugin + " " + d.CodeHash
	v := adminv1.PluginVersion{Version: d.Manifest.Version, CodeHash: d.CodeHash, RequestedBy: d.RequestedBy, Time: e.Time}
	switch {
	case e.Type == kernel.EventPluginAborted: // a staged install that never committed
		delete(x.staged, key)
		return
	case e.Type == kernel.EventPluginMounted:
		s, ok := x.staged[key]
		if !ok {
			return
		}
		delete(x.staged, key)
		v = withTime(s, e.Time)
	case d.Staged:
		x.staged[key] = v
		return
	}
	list := append(x.byID[e.Plugin], v)
	if len(list) > adminv1.MaxVersions {
		list = slices.Clone(list[len(list)-adminv1.MaxVersions:])
	}
	x.byID[e.Plugin] = list
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
