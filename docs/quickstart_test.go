package docs

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/internal/testenv"
)

// quickstart returns README.md's quickstart: the Go file, the shell block that
// runs it and the output block after it.
func quickstart(md string) (goFile, script, want string, err error) {
	_, sec, ok := strings.Cut(md, "\n## Quickstart")
	if !ok {
		return "", "", "", fmt.Errorf("README.md has no Quickstart section")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	block := func(lang string) (string, error) {
		_, rest, ok := strings.Cut(sec, "\n```"+lang+"\n")
		if !ok {
			return "", fmt.Errorf("the Quickstart has no ```%s block", lang)
		}
		code, after, ok := strings.Cut(rest, "\n```\n")
		if !ok {
			return "", fmt.Errorf("the Quickstart's ```%s block is not closed", lang)
		}
		sec = after
		return code, nil
	}
	if goFile, err = block("go"); err != nil {
		return
	}
	if script, err = block("sh"); err != nil {
		return
	}
	want, err = block("text")
	return
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

// TestQuickstartRuns saves the README's quickstart main.go in a directory of
// this module and runs its shell block as pasted, in bash, then compares what
// it printed with the README's output block. Only the ports change (to free
// ones, so the test cannot meet another server), and the binary is built in
// the test's temporary directory.
func TestQuickstartRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the quickstart builds a binary")
	}
	for _, tool := range []string{"bash", "python3", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Missing(t, "%s is missing; install the Debian package %s", tool, tool)
		}
	}
	root := moduleRoot(t)
	md, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	goFile, script, want, err := quickstart(string(md))
	if err != nil {
		t.Fatal(err)
	}
	// A directory inside the module (the "_" keeps it out of ./... patterns).
	dir, err := os.MkdirTemp(filepath.Join(root, "docs"), "_quickstart-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(goFile), 0o644); err != nil {
		t.Fatal(err)
	}
	supplierPort, workerPort := freePort(t), freePort(t)
	bin := filepath.Join(t.TempDir(), "oncegate-quickstart")
	for old, repl := range map[string]string{"9000": supplierPort, "localhost:8080": "localhost:" + workerPort, "/tmp/oncegate-quickstart": bin} {
		if !strings.Contains(script, old) {
			t.Fatalf("the Quickstart's shell block no longer mentions %s; update this test", old)
		}
		script = strings.ReplaceAll(script, old, repl)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PORT="+workerPort)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the Quickstart's shell block failed: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	if got := strings.TrimSpace(string(out)); got != strings.TrimSpace(want) {
		t.Fatalf("the Quickstart printed\n%s\nwant (README.md)\n%s\nstderr:\n%s", got, want, stderr.String())
	}
	if !strings.Contains(stderr.String(), "drained and stopped") {
		t.Errorf("the handler did not drain on the block's kill (SIGTERM); stderr:\n%s", stderr.String())
	}
}
