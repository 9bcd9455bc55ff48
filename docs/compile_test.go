package docs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// moduleRoot returns the directory of the module's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		t.Fatal("not inside a module")
	}
	root := filepath.Dir(gomod)
	trackSources(t, root)
	return root
}

// trackSources stats every Go source and module file of the tree, so `go test`
// records them among the test's inputs: the checks compile that code in a
// subprocess, and a cached PASS must not outlive a change to it.
func trackSources(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if n := d.Name(); strings.HasSuffix(n, ".go") || n == "go.mod" || n == "go.sum" {
			_, err = os.Stat(path)
		}
		return err
	})
	if err != nil {
		t.Fatalf("walk %s: %v", root, err)
	}
}

// compileSnippets type-checks every snippet with one `go build`. Each snippet
// becomes a package of its own under root/docs/snippetcheck/, a directory that
// exists only in the build's overlay, so nothing is written to the tree.
// root is the module root; mdRoot the directory the snippets' File paths are
// relative to. It returns the compiler's output, with paths made relative to
// mdRoot, and whether the build failed.
func compileSnippets(t *testing.T, root, mdRoot string, snippets []snippet) (string, bool) {
	t.Helper()
	tmp := t.TempDir()
	overlay := map[string]string{}
	var pkgs []string
	for i, s := range snippets {
		src, err := wrap(s, mdRoot)
		if err != nil {
			return err.Error(), true
		}
		file := filepath.Join(tmp, fmt.Sprintf("s%03d.go", i))
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		dir := fmt.Sprintf("docs/snippetcheck/s%03d", i)
		overlay[filepath.Join(root, dir, "snippet.go")] = file
		pkgs = append(pkgs, "./"+dir)
	}
	if len(pkgs) == 0 {
		return "", false
	}
	ov := writeOverlay(t, tmp, overlay)
	cmd := exec.Command("go", append([]string{"build", "-overlay=" + ov}, pkgs...)...)
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	text := strings.ReplaceAll(out.String(), mdRoot+string(filepath.Separator), "")
	return text, err != nil
}

// docSnippets returns the ```go blocks of every documentation file, and the
// files.
func docSnippets(t *testing.T, root string) ([]snippet, []string) {
	t.Helper()
	files, err := docFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	var all []snippet
	for _, f := range files {
		md, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		ss, err := extractSnippets(f, string(md))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, ss...)
	}
	return all, files
}

// writeOverlay writes a go build -overlay file replacing the paths of overlay
// (path → file) and returns its name.
func writeOverlay(t *testing.T, tmp string, overlay map[string]string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"Replace": overlay})
	if err != nil {
		t.Fatal(err)
	}
	ov := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ov, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return ov
}

// TestSnippetsCompile compiles every ```go block of the documentation.
func TestSnippetsCompile(t *testing.T) {
	root := moduleRoot(t)
	all, files := docSnippets(t, root)
	if len(all) == 0 {
		t.Fatal("found no ```go blocks; the extractor or the docs are broken")
	}
	for _, s := range all {
		if ok, err := gofmtClean(s); !ok {
			t.Errorf("%s: snippet is not gofmt-formatted (%v)", s, err)
		}
	}
	if out, failed := compileSnippets(t, root, root, all); failed {
		t.Fatalf("documentation snippets do not compile:\n%s", out)
	}
	t.Logf("compiled %d snippets from %d files", len(all), len(files))
}

// TestSnippetCheckCatchesRot proves the check fails, at the Markdown line, when
// a snippet stops compiling, and passes the same document once it is fixed.
func TestSnippetCheckCatchesRot(t *testing.T) {
	root := moduleRoot(t)
	mdRoot := t.TempDir()
	doc := func(call string) string {
		return "# Rot\n\n<!-- compile: body\nvar store gate.Backend\n-->\n```go\ng, err := gate.New(store, nil)\nif err != nil {\n\treturn err\n}\n" +
			call + "\n```\n"
	}
	cases := []struct {
		name, call, want string
		fail             bool
	}{
		{"renamed API", `_ = g.LockIt`, "rot.md:11:7: g.LockIt undefined", true},
		{"wrong arity", `_ = gate.OperationKey(1)`, "rot.md:11:23: cannot use 1", true},
		{"current API", `_ = g.Key("po-1")`, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ss, err := extractSnippets("rot.md", doc(c.call))
			if err != nil {
				t.Fatal(err)
			}
			out, failed := compileSnippets(t, root, mdRoot, ss)
			if failed != c.fail || !strings.Contains(out, c.want) {
				t.Fatalf("failed=%v, want %v; output must contain %q:\n%s", failed, c.fail, c.want, out)
			}
		})
	}
}
