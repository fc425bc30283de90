package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeMap: README.md's dependency map is the one go list gives today.
func TestReadmeMap(t *testing.T) {
	root := filepath.Join("..", "..")
	want, err := Map(root)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), want) {
		t.Fatalf("README.md's dependency map is stale; run `go run ./internal/depmap -w`. It should be:\n%s", want)
	}
}

// TestLayers: a package sits one layer above the highest it imports.
func TestLayers(t *testing.T) {
	d := layers(map[string][]string{"a": {"b", "c"}, "b": {"c"}, "c": nil, "d": nil})
	if d["a"] != 2 || d["b"] != 1 || d["c"] != 0 || d["d"] != 0 {
		t.Fatalf("layers %v", d)
	}
}
