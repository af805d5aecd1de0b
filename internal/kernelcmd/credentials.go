package kernelcmd

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/sms-baseline/sms/baseline"
	"github.com/sms-baseline/sms/judge"
	"github.com/sms-baseline/sms/plugins/agentloop"
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
	scopes, err := smshttp.ParseScopes(rec[2])
	if err != nil {
		return smshttp.Credential{}, fmt.Errorf("credential %s: %w", name, err)
	}
	return smshttp.Credential{Name: name, Token: token, Scopes: scopes}, nil
}
