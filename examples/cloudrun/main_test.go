package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestExamplesUsePublicPackagesOnly fails when an example imports a package
// under internal/: a user copying an example out of the module could not build it.
func TestExamplesUsePublicPackagesOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps ./examples/...: %v\n%s", err, out)
	}
	var bad []string
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/oncegate/oncegate/") && strings.Contains(p+"/", "/internal/") {
			bad = append(bad, p)
		}
	}
	if len(bad) > 0 {
		t.Fatalf("examples depend on internal packages: %s", strings.Join(bad, ", "))
	}
	if !strings.Contains(string(out), "github.com/oncegate/oncegate/runtime/gateenv") {
		t.Fatal("go list printed no oncegate package: the check would pass by construction")
	}
}
