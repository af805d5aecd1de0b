package kernelcmd

import (
	"github.com/sms-baseline/sms/kernelcmd/kernelconfig"

	"bufio"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/drivers/objects/fs"
	"github.com/sms-baseline/sms/drivers/objects/memory"
	"github.com/sms-baseline/sms/drivers/objects/s3"
)

// ObjectsForms says what --objects takes, for its help.
const ObjectsForms = "the object store for files: memory, fs:PATH, or s3://BUCKET[?endpoint=URL&region=R&prefix=P/] with --objects-credentials-file (default: none)"

// openObjects opens the object store spec names; "" is none.
func openObjects(ctx context.Context, spec, credentials string) (contracts.ObjectStore, error) {
	switch {
	case spec == "":
		if credentials != "" {
			return nil, errors.New("--objects-credentials-file needs an s3 store (--objects s3://BUCKET)")
		}
		return nil, nil
	case spec == "memory":
		return memory.New(), nil
	case strings.HasPrefix(spec, "fs:"):
		dir := strings.TrimPrefix(spec, "fs:")
		if dir == "" {
			return nil, errors.New("--objects fs:PATH needs a directory")
		}
		return fs.New(filepath.Clean(dir))
	case strings.HasPrefix(spec, "s3://"):
		return openS3(ctx, spec, credentials)
	}
	return nil, fmt.Errorf("--objects %q: want memory, fs:PATH or s3://BUCKET[?endpoint=URL&region=R&prefix=P/]", spec)
}

func openS3(ctx context.Context, spec, credentials string) (contracts.ObjectStore, error) {
	u, err := url.Parse(spec)
	if err != nil || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("--objects %q: want s3://BUCKET[?endpoint=URL&region=R&prefix=P/]", spec)
	}
	q := u.Query()
	for k := range q {
		if k != "endpoint" && k != "region" && k != "prefix" {
			return nil, fmt.Errorf("--objects: unknown setting %q (want endpoint, region, prefix)", k)
		}
	}
	if credentials == "" {
		return nil, errors.New("--objects s3://BUCKET needs --objects-credentials-file: the access key on its first line, the secret key on its second")
	}
	access, secret, err := readCredentials(credentials)
	if err != nil {
		return nil, err
	}
	st, err := s3.New(s3.Options{Bucket: u.Host, Endpoint: q.Get("endpoint"), Region: q.Get("region"), Prefix: q.Get("prefix"),
		AccessKey: access, SecretKey: secret})
	if err != nil {
		return nil, fmt.Errorf("--objects: %w", err)
	}
	if err := st.EnsureBucket(ctx); err != nil {
		return nil, fmt.Errorf("--objects: %w", err)
	}
	return st, nil
}

// readCredentials reads an access key and a secret key: a file of two
// lines, or a directory of the files accessKey and secretKey (a mounted
// Secret).
func readCredentials(path string) (string, string, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		var keys [2]string
		for i, name := range []string{kernelconfig.FileAccessKey, kernelconfig.FileSecretKey} {
			raw, err := os.ReadFile(filepath.Join(path, name))
			if err != nil {
				return "", "", fmt.Errorf("--objects-credentials-file: %w", err)
			}
			if keys[i] = strings.TrimSpace(string(raw)); keys[i] == "" {
				return "", "", fmt.Errorf("--objects-credentials-file: %s is empty", filepath.Join(path, name))
			}
		}
		return keys[0], keys[1], nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", "", fmt.Errorf("--objects-credentials-file: %w", err)
	}
	defer func() { _ = f.Close() }()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() && len(lines) < 3 {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			lines = append(lines, line)
		}
	}
	if len(lines) != 2 {
		return "", "", fmt.Errorf("--objects-credentials-file %s: want the access key on its first line and the secret key on its second", path)
	}
	return lines[0], lines[1], nil
}
