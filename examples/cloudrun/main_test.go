package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestExamplesUsePublicPackagesOnly fails when an example imports a package
// under internal/: a user copying an example out of the module could not build
// it. Only the examples' own imports count; a public package may use the
// module's internal packages (runtime/gate does), which a user's program builds
// through it.
func TestExamplesUsePublicPackagesOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}:{{range .Imports}} {{.}}{{end}}`, "../...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list ./examples/...: %v\n%s", err, out)
	}
	var bad []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ":")
		for _, p := range strings.Fields(imports) {
			if strings.HasPrefix(p, "github.com/oncegate/oncegate/") && strings.Contains(p+"/", "/internal/") {
				bad = append(bad, pkg+" imports "+p)
			}
		}
	}
	if len(bad) > 0 {
		t.Fatalf("examples import internal packages: %s", strings.Join(bad, ", "))
	}
	if !strings.Contains(string(out), "github.com/oncegate/oncegate/runtime/gateenv") {
		t.Fatal("go list printed no oncegate package: the check would pass by construction")
	}
}
