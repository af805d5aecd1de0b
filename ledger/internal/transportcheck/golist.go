package transportcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
)

// listedPackage is the part of `go list -json` output the check reads.
type listedPackage struct {
	Dir        string
	ImportPath string
	Export     string
	GoFiles    []string
	CgoFiles   []string
	Deps       []string
	DepOnly    bool

	// exports maps each listed import path to its export data file.
	exports map[string]string
}

// goList lists the package in dir with its dependencies. It asks for export
// data too, so that the type checker can import the dependencies without
// compiling them from source. Errors in the package (such as an import no
// module provides) are tolerated: they are what the check is looking for.
func goList(dir string) (*listedPackage, error) {
	cmd := exec.Command("go", "list", "-e", "-json", "-export", "-deps", ".")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w: %s", err, stderr.Bytes())
	}
	var target *listedPackage
	exports := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("decode go list output: %w", err)
		}
		exports[p.ImportPath] = p.Export
		if !p.DepOnly {
			target = &p
		}
	}
	if target == nil {
		return nil, fmt.Errorf("go list found no package in %s", dir)
	}
	target.exports = exports
	return target, nil
}
