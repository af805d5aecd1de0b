package kernelcmd

import (
	"github.com/sms-baseline/sms/kernelcmd/kernelconfig"

	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sms-baseline/sms/baseline"
	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/plugins/agentloop"
	"github.com/sms-baseline/sms/plugins/auth"
	smshttp "github.com/sms-baseline/sms/plugins/http"
)

// reservedNames are names the kernel records on its own: the admin
// token's credential, an unauthenticated caller, the chat agent.
var reservedNames = []string{baseline.AdminCredential, "anonymous", agentloop.Requester}

// ReadTokenAuthFile reads credentials in the format of kube-apiserver's
// static token file: one CSV record per line, `token,name,"scope,scope"`,
// with # comments and blank lines ignored. Every problem names its line.
func ReadTokenAuthFile(path string) ([]smshttp.Credential, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--token-auth-file: %w", err)
	}
	defer func() { _ = f.Close() }()
	creds, err := ParseTokenAuth(f)
	if err != nil {
		return nil, fmt.Errorf("--token-auth-file %s: %w", path, err)
	}
	return creds, nil
}

// ParseTokenAuth parses the token file format ReadTokenAuthFile reads.
func ParseTokenAuth(r io.Reader) ([]smshttp.Credential, error) {
	rd := csv.NewReader(r)
	rd.Comment = '#'
	rd.FieldsPerRecord = 3
	rd.TrimLeadingSpace = true
	var creds []smshttp.Credential
	seenToken, seenName := map[string]bool{}, map[string]bool{}
	for {
		rec, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("want token,name,\"scopes\" on each line: %w", err)
		}
		line, _ := rd.FieldPos(0)
		c, err := credential(rec)
		switch {
		case err != nil:
			return nil, fmt.Errorf("line %d: %w", line, err)
		case seenToken[c.Token]:
			return nil, fmt.Errorf("line %d: the token of %s is already used by another credential", line, c.Name)
		case seenName[c.Name]:
			return nil, fmt.Errorf("line %d: credential name %q is used twice", line, c.Name)
		}
		seenToken[c.Token], seenName[c.Name] = true, true
		creds = append(creds, c)
	}
	if len(creds) == 0 {
		return nil, errors.New("the file holds no credential")
	}
	return creds, nil
}

func credential(rec []string) (smshttp.Credential, error) {
	token, name := strings.TrimSpace(rec[0]), strings.TrimSpace(rec[1])
	if token == "" {
		return smshttp.Credential{}, errors.New("the token is empty")
	}
	if judge.ValidateDecider(name) != nil {
		return smshttp.Credential{}, fmt.Errorf("the name must be 1 to %d bytes of printable text", judge.MaxDeciderBytes)
	}
	if slices.Contains(reservedNames, name) {
		return smshttp.Credential{}, fmt.Errorf("the name %q is the kernel's own: audit records could not tell the two apart", name)
	}
	if strings.HasPrefix(name, smshttp.UserPrefix) {
		return smshttp.Credential{}, fmt.Errorf("the name %q starts with %q, which names the application's users", name, smshttp.UserPrefix)
	}
	scopes, err := smshttp.ParseScopes(rec[2])
	if err != nil {
		return smshttp.Credential{}, fmt.Errorf("credential %s: %w", name, err)
	}
	return smshttp.Credential{Name: name, Token: token, Scopes: scopes}, nil
}

// authOptions are the auth plugin's options c asks for, or nil without
// --users or --bootstrap-admin-file.
func authOptions(c Config) (*auth.Options, error) {
	if !c.Users && c.BootstrapAdminFile == "" {
		return nil, nil
	}
	opts := &auth.Options{NoApprove: c.NoSessionApprove, SecureCookie: c.SecureCookie}
	if c.BootstrapAdminFile != "" {
		b, err := readBootstrap(c.BootstrapAdminFile)
		if err != nil {
			return nil, fmt.Errorf("--bootstrap-admin-file: %w", err)
		}
		opts.Bootstrap = b
	}
	return opts, nil
}

// readBootstrap reads the first admin: a file of two lines, the login
// then the password, or a directory holding the files login and password
// (a mounted Secret). Neither value is ever logged.
func readBootstrap(path string) (*auth.Bootstrap, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		login, err1 := os.ReadFile(filepath.Join(path, kernelconfig.FileLogin))
		password, err2 := os.ReadFile(filepath.Join(path, kernelconfig.FilePassword))
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("%s: a directory must hold the files %s and %s: %w", path, kernelconfig.FileLogin, kernelconfig.FilePassword, err)
		}
		return bootstrapOf(path, strings.TrimSpace(string(login)), strings.TrimRight(string(password), "\r\n"))
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\r\n"), "\n")
	if len(lines) != 2 {
		return nil, fmt.Errorf("%s: want two lines, the login then the password", path)
	}
	return bootstrapOf(path, strings.TrimSpace(lines[0]), strings.TrimRight(lines[1], "\r"))
}

func bootstrapOf(path, login, password string) (*auth.Bootstrap, error) {
	if login == "" || password == "" {
		return nil, fmt.Errorf("%s: the login and the password must both be non-empty", path)
	}
	return &auth.Bootstrap{Login: login, Password: password}, nil
}
