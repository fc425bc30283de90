package isospec

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Files of one spec NAME.spec: its PostgreSQL twin NAME.pg.spec, the raw
// isolationtester output NAME.pg.out, and the expected output NAME.out.
type Files struct {
	Spec, Twin, PGOut, Out string
}

// FilesOf names the files that belong to a spec file.
func FilesOf(specPath string) Files {
	base := strings.TrimSuffix(specPath, ".spec")
	return Files{Spec: specPath, Twin: base + ".pg.spec", PGOut: base + ".pg.out", Out: base + ".out"}
}

// SpecFiles lists the specs (not their twins) in dir, sorted.
func SpecFiles(dir string) ([]string, error) {
	all, err := filepath.Glob(filepath.Join(dir, "*.spec"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range all {
		if !strings.HasSuffix(f, ".pg.spec") {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Load reads and parses a spec in our command language.
func Load(path string) (*Spec, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(filepath.Base(path), string(src))
}

// LoadRaw reads a PostgreSQL isolation spec (blocks kept as SQL text).
func LoadRaw(path string) (*Spec, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseRaw(filepath.Base(path), string(src))
}

// ConvertFiles converts the committed PostgreSQL output of a spec into the
// expected output of the runner.
func ConvertFiles(f Files) (string, error) {
	ours, err := Load(f.Spec)
	if err != nil {
		return "", err
	}
	twin, err := LoadRaw(f.Twin)
	if err != nil {
		return "", err
	}
	pg, err := os.ReadFile(f.PGOut)
	if err != nil {
		return "", fmt.Errorf("%v (run testdata/spec/oracle.sh)", err)
	}
	return Convert(ours, twin, string(pg))
}
