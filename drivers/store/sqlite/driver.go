package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sms-baseline/sms/contracts"
)

// Driver describes the SQLite store to a driver registry. Its specs are
// sqlite:PATH, whose parent directory is created, and sqlite::memory:.
var Driver = contracts.StoreDriver{
	DriverInfo: contracts.DriverInfo{Name: "sqlite", Help: "one file"},
	Form:       "sqlite:PATH",
	Open:       openSpec,
}

func openSpec(ctx context.Context, s contracts.StoreSettings) (contracts.Store, error) {
	path := strings.TrimPrefix(s.URL, "sqlite:")
	if path == "" {
		return nil, fmt.Errorf("open store: %q names no file: use sqlite:PATH", s.URL)
	}
	if path != Memory {
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
	}
	st, err := OpenStore(ctx, path)
	if err != nil {
		return nil, err
	}
	return st, nil
}
