package isospec

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// specDirs hold specs with committed PostgreSQL outputs (see oracle.sh).
var specDirs = []string{"../testdata/spec", "../examples"}

func allSpecs(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, d := range specDirs {
		fs, err := SpecFiles(d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fs...)
	}
	if len(out) == 0 {
		t.Fatal("no spec found")
	}
	return out
}

func specName(path string) string {
	return filepath.Base(filepath.Dir(path)) + "/" + strings.TrimSuffix(filepath.Base(path), ".spec")
}

// TestSpecs runs every spec against tupled and compares the output with
// NAME.out, which is PostgreSQL 15's behaviour for the same schedule.
func TestSpecs(t *testing.T) {
	for _, path := range allSpecs(t) {
		t.Run(specName(path), func(t *testing.T) {
			f := FilesOf(path)
			s, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(f.Out)
			if err != nil {
				t.Fatalf("%v (run testdata/spec/oracle.sh)", err)
			}
			var out bytes.Buffer
			err = Run(context.Background(), s, &out, Config{})
			if err != nil {
				t.Errorf("run failed: %v\noutput so far:\n%s", err, out.String())
				return
			}
			if got := out.String(); got != string(want) {
				t.Errorf("tupled differs from PostgreSQL (- PostgreSQL %s, + tupled):\n%s", filepath.Base(f.Out), Diff(string(want), got))
			}
		})
	}
}

// TestExpectedOutputsAreConverted checks that each NAME.out is exactly what
// the converter makes of the committed PostgreSQL output NAME.pg.out: the
// expectations cannot be edited by hand.
func TestExpectedOutputsAreConverted(t *testing.T) {
	for _, path := range allSpecs(t) {
		t.Run(specName(path), func(t *testing.T) {
			f := FilesOf(path)
			conv, err := ConvertFiles(f)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(f.Out)
			if err != nil {
				t.Fatal(err)
			}
			if conv != string(want) {
				t.Errorf("%s is not the conversion of %s (- committed, + converted):\n%s", f.Out, f.PGOut, Diff(string(want), conv))
			}
		})
	}
}

// TestTwinsUpToDate checks that each NAME.pg.spec is the SQL translation of
// NAME.spec, so that PostgreSQL ran the same schedule.
func TestTwinsUpToDate(t *testing.T) {
	for _, path := range allSpecs(t) {
		t.Run(specName(path), func(t *testing.T) {
			s, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			f := FilesOf(path)
			twin, err := os.ReadFile(f.Twin)
			if err != nil {
				t.Fatal(err)
			}
			if want := Twin(s, filepath.Base(path)); string(twin) != want {
				t.Errorf("%s is not up to date: run testdata/spec/oracle.sh %s\n%s", f.Twin, path, Diff(string(twin), want))
			}
		})
	}
}

// TestSpecsLint checks the rules that keep a spec and its twin equivalent.
func TestSpecsLint(t *testing.T) {
	for _, path := range allSpecs(t) {
		s, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := LintSpec(s); err != nil {
			t.Error(err)
		}
	}
}
