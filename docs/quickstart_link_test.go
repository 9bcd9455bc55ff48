package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// backendClients are the third-party packages (import-path prefixes) behind
// each backend of gateenv.
var backendClients = map[string][]string{
	"sql":       {"github.com/jackc/pgx/", "github.com/go-sql-driver/mysql", "modernc.org/sqlite"},
	"redis":     {"github.com/redis/go-redis/"},
	"datastore": {"cloud.google.com/go/datastore"},
}

// pullClient is the import-path prefix of the Pub/Sub client, which only pull
// workers (gateenv/pullenv, runtime/pull) link.
const pullClient = "cloud.google.com/go/pubsub"

// TestQuickstartLinksOneBackend runs `go list -deps` on README.md's quickstart
// program as written (it imports gateenv/sqlenv), with that import changed to
// redisenv or datastoreenv, and without it: each links the clients of its own
// backend and none of the others' (so a Redis-only binary has no pgx, MySQL,
// SQLite or Datastore package), and gateenv alone links none. None links the
// Pub/Sub client (pullClient): a push program does not need it, and only
// gateenv/pullenv, which a pull worker imports, links it.
func TestQuickstartLinksOneBackend(t *testing.T) {
	root := moduleRoot(t)
	md, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	goFile, _, _, err := quickstart(string(md))
	if err != nil {
		t.Fatal(err)
	}
	const sqlImport = `_ "github.com/oncegate/oncegate/runtime/gateenv/sqlenv"`
	if !strings.Contains(goFile, sqlImport) {
		t.Fatalf("the Quickstart's main.go no longer has %s; update this test", sqlImport)
	}
	for _, tt := range []struct {
		backend string // "" for none
		source  string
	}{
		{"sql", goFile},
		{"redis", strings.Replace(goFile, "/gateenv/sqlenv", "/gateenv/redisenv", 1)},
		{"datastore", strings.Replace(goFile, "/gateenv/sqlenv", "/gateenv/datastoreenv", 1)},
		{"", strings.Replace(goFile, sqlImport, "", 1)},
	} {
		t.Run("backend="+tt.backend, func(t *testing.T) {
			// A directory inside the module (the "_" keeps it out of ./... patterns).
			dir, err := os.MkdirTemp(filepath.Join(root, "docs"), "_linkcheck-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.RemoveAll(dir) })
			if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(tt.source), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("go", "list", "-deps", ".")
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("go list -deps: %v\n%s", err, out)
			}
			deps := strings.Fields(string(out))
			if !slices.Contains(deps, "github.com/oncegate/oncegate/runtime/gateenv") {
				t.Fatalf("go list -deps does not list gateenv: the check would pass by construction\n%s", out)
			}
			if i := slices.IndexFunc(deps, func(p string) bool { return strings.HasPrefix(p, pullClient) }); i >= 0 {
				t.Errorf("the push quickstart on backend %q links %s, the Pub/Sub client only pull workers need", tt.backend, deps[i])
			}
			for backend, prefixes := range backendClients {
				for _, prefix := range prefixes {
					i := slices.IndexFunc(deps, func(p string) bool { return strings.HasPrefix(p, prefix) })
					switch {
					case backend != tt.backend && i >= 0:
						t.Errorf("the quickstart on backend %q links %s, a client of the %s backend", tt.backend, deps[i], backend)
					case backend == tt.backend && i < 0:
						t.Errorf("the quickstart on backend %q links no %s package: its backend is not linked", tt.backend, prefix)
					}
				}
			}
		})
	}
}
