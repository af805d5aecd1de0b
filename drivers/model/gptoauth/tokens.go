package gptoauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Tokens are what `codex login` keeps in auth.json under "tokens".
type Tokens struct {
	IDToken      string `json:"id_token"`
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	AccountID    string `json:"account_id"`
}

// expiry reads the access token's exp claim; zero when it has none.
func (t Tokens) expiry() time.Time {
	parts := strings.Split(t.AccessToken, ".")
	if len(parts) != 3 {
		return time.Time{}
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return time.Time{}
	}
	var claims struct {
		Exp int64 `json:"exp"`
	}
	if json.Unmarshal(raw, &claims) != nil || claims.Exp == 0 {
		return time.Time{}
	}
	return time.Unix(claims.Exp, 0)
}

// FileStore keeps tokens in an auth.json file as codex login writes it,
// rewriting only its "tokens" and "last_refresh" fields, with 0600
// permissions, through a temporary file renamed over it.
type FileStore struct {
	// Path is the auth.json file.
	Path string
}

// DefaultAuthFile is $CODEX_HOME/auth.json, or ~/.codex/auth.json.
func DefaultAuthFile() string {
	if home := os.Getenv("CODEX_HOME"); home != "" {
		return filepath.Join(home, "auth.json")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".codex", "auth.json")
}

// Load reads the tokens.
func (s FileStore) Load() (Tokens, error) {
	raw, err := os.ReadFile(s.Path)
	if err != nil {
		return Tokens{}, fmt.Errorf("read %s (run `codex login`): %w", s.Path, err)
	}
	var doc struct {
		Tokens *Tokens `json:"tokens"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return Tokens{}, fmt.Errorf("%s: %w", s.Path, err)
	}
	if doc.Tokens == nil || doc.Tokens.AccessToken == "" || doc.Tokens.RefreshToken == "" {
		return Tokens{}, fmt.Errorf("%s holds no ChatGPT login tokens (run `codex login` and sign in with ChatGPT)", s.Path)
	}
	return *doc.Tokens, nil
}

// Save writes t over the file's tokens.
func (s FileStore) Save(t Tokens) error {
	doc := map[string]any{}
	if raw, err := os.ReadFile(s.Path); err == nil {
		_ = json.Unmarshal(raw, &doc)
	}
	doc["tokens"], doc["last_refresh"] = t, time.Now().UTC().Format(time.RFC3339Nano)
	raw, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.Path), ".auth-*.json")
	if err != nil {
		return fmt.Errorf("save tokens: %w", err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if err := tmp.Chmod(0o600); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("save tokens: %w", err)
	}
	if _, err := tmp.Write(raw); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("save tokens: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save tokens: %w", err)
	}
	return os.Rename(tmp.Name(), s.Path)
}

// source hands out a fresh access token, refreshing it before it expires
// and when the backend refuses it.
type source struct {
	mu      sync.Mutex
	tokens  Tokens
	store   FileStore
	authURL string
	client  *http.Client
	margin  time.Duration
}

// current returns the tokens, refreshed first when the access token
// expires within the margin.
func (s *source) current(ctx context.Context) (Tokens, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if exp := s.tokens.expiry(); !exp.IsZero() && time.Until(exp) < s.margin {
		if err := s.refreshLocked(ctx); err != nil {
			return Tokens{}, err
		}
	}
	return s.tokens, nil
}

// refresh replaces the tokens unless another call already did since
// stale was handed out.
func (s *source) refresh(ctx context.Context, stale string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tokens.AccessToken != stale {
		return nil
	}
	return s.refreshLocked(ctx)
}

func (s *source) refreshLocked(ctx context.Context) error {
	// The codex CLI may have refreshed the same login meanwhile: a
	// refresh token is good once, so take the file's tokens when they
	// are newer, and refresh only if they too are stale.
	if stored, err := s.store.Load(); err == nil && stored.AccessToken != s.tokens.AccessToken {
		s.tokens = stored
		if exp := stored.expiry(); exp.IsZero() || time.Until(exp) >= s.margin {
			return nil
		}
	}
	body, _ := json.Marshal(map[string]string{"client_id": ClientID, "grant_type": "refresh_token",
		"refresh_token": s.tokens.RefreshToken, "scope": "openid profile email"})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.authURL, strings.NewReader(string(body)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("refresh the login: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("refresh the login: %s: %s (run `codex login` again)", resp.Status, strings.TrimSpace(string(raw)))
	}
	var next Tokens
	if err := json.Unmarshal(raw, &next); err != nil || next.AccessToken == "" {
		return errors.New("refresh the login: the answer holds no access token")
	}
	if next.RefreshToken == "" {
		next.RefreshToken = s.tokens.RefreshToken
	}
	if next.IDToken == "" {
		next.IDToken = s.tokens.IDToken
	}
	next.AccountID = s.tokens.AccountID
	s.tokens = next
	if err := s.store.Save(next); err != nil {
		return fmt.Errorf("refresh the login: %w", err)
	}
	return nil
}
