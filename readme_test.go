package tupled_test

import (
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// TestReadmeQuickStart: the README's library quick start is the body of
// Example (example_test.go, run by go test with its output checked) in a
// main function, and it parses as a Go program whose imports are the ones
// that body uses — so the first code a reader copies compiles and does
// what the README says.
func TestReadmeQuickStart(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "## Quick start: the library\n")
	if !ok {
		t.Fatal(`README.md has no "## Quick start: the library" section`)
	}
	_, after, ok = strings.Cut(after, "```go\n")
	block, _, ok2 := strings.Cut(after, "```\n")
	if !ok || !ok2 {
		t.Fatal("the quick start has no ```go block")
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(string(src), "\nfunc Example() {\n")
	body, _, ok2 = strings.Cut(body, "\t// Output:")
	if !ok || !ok2 {
		t.Fatal("example_test.go has no func Example with an Output comment")
	}
	if !strings.Contains(block, "\nfunc main() {\n"+body+"}\n") {
		t.Errorf("README.md's quick start is not example_test.go's Example body; copy it again:\n%s", body)
	}
	f, err := parser.ParseFile(token.NewFileSet(), "README.go", block, 0)
	if err != nil {
		t.Fatalf("the quick start does not parse: %v", err)
	}
	if f.Name.Name != "main" {
		t.Errorf("the quick start is package %s, want main", f.Name.Name)
	}
	for _, imp := range f.Imports {
		path := strings.Trim(imp.Path.Value, `"`)
		name := path[strings.LastIndex(path, "/")+1:]
		if !strings.Contains(body, name+".") {
			t.Errorf("the quick start imports %s, which its body does not use", path)
		}
	}
	for _, pkg := range []string{"context", "errors", "fmt", "log", "tupled"} {
		if strings.Contains(body, pkg+".") && !strings.Contains(block, `"`+pkg+`"`) && !strings.Contains(block, `/`+pkg+`"`) {
			t.Errorf("the quick start uses %s without importing it", pkg)
		}
	}
}
