package kernel

import (
	"encoding/hex"
	"fmt"
	"io"
	"strings"
)

// MountAuthorization permits one agent plugin mount: the plugin with exactly
// this id, version, code hash and declaration (Manifest.Declaration: the
// keys, scopes and points it may use). Only the kernel mints them
// (Authorize, a system-only operation), each nonce is honoured once, and a
// value built by hand is refused because the kernel never issued its nonce.
type MountAuthorization struct {
	PluginID    string `json:"pluginId"`
	Version     string `json:"version"`
	CodeHash    string `json:"codeHash"`
	Declaration string `json:"declaration"`
	Nonce       string `json:"nonce"`
}

// Authorize mints a single-use authorization for the manifest and code hash.
// It is reachable only by code that holds the *Kernel or a system fiber's
// API; agent code never does.
func (k *Kernel) Authorize(m Manifest, codeHash string) (MountAuthorization, error) {
	if err := m.Validate(); err != nil {
		return MountAuthorization{}, k.tag(err)
	}
	if !strings.HasPrefix(codeHash, "sha256:") || len(codeHash) != len("sha256:")+64 {
		return MountAuthorization{}, k.errf(CodeValidation, "authorize", m.ID,
			fmt.Sprintf("code hash %q is not a sha256 content address", codeHash))
	}
	var raw [16]byte
	if _, err := io.ReadFull(k.rand, raw[:]); err != nil {
		return MountAuthorization{}, k.wrapErr("authorize", m.ID, "read nonce", err)
	}
	a := MountAuthorization{PluginID: m.ID, Version: m.Version, CodeHash: codeHash, Declaration: m.Declaration(),
		Nonce: hex.EncodeToString(raw[:])}
	k.reg.Lock()
	k.issued[a.Nonce] = a
	k.reg.Unlock()
	return a, nil
}

// redeem consumes the authorization if it was issued, unused and matches.
// A presented nonce is burnt even when the rest does not match.
func (k *Kernel) redeem(a MountAuthorization, m Manifest, codeHash string) error {
	k.reg.Lock()
	defer k.reg.Unlock()
	deny := func(msg string) error { return k.errfLocked(CodeAuthorization, "propose", m.ID, msg) }
	if a.Nonce == "" {
		return deny("a mount authorization is required")
	}
	if k.used[a.Nonce] {
		return deny("the mount authorization was already used")
	}
	issued, ok := k.issued[a.Nonce]
	if !ok || issued != a {
		return deny("the mount authorization was not issued by this kernel")
	}
	delete(k.issued, a.Nonce)
	k.used[a.Nonce] = true
	switch {
	case a.PluginID != m.ID:
		return deny(fmt.Sprintf("the authorization is for plugin %q", a.PluginID))
	case a.Version != m.Version:
		return deny(fmt.Sprintf("the authorization is for version %q, not %q", a.Version, m.Version))
	case a.CodeHash != codeHash:
		return deny(fmt.Sprintf("the code hash %s does not match the authorized %s", codeHash, a.CodeHash))
	case a.Declaration != m.Declaration():
		return deny("the manifest declares other keys, scopes or points than were authorized")
	}
	return nil
}
