package docs

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// testFuncs returns the names of the Test functions a decls or file snippet
// declares.
func testFuncs(s snippet) []string {
	if s.Mode != modeDecls && s.Mode != modeFile {
		return nil
	}
	src := s.Code
	if s.Mode == modeDecls {
		src = "package p\n" + src
	}
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	var names []string
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Test") {
			names = append(names, fd.Name.Name)
		}
	}
	return names
}

// runTestSnippets runs, with `go test`, every snippet that declares Test
// functions, each as the test file of a package that exists only in the
// build's overlay. The ONCEGATE_* variables of this process are cleared, so a
// snippet gets only what it sets. It returns the output and whether a test
// failed, and how many snippets it ran.
func runTestSnippets(t *testing.T, root, mdRoot string, snippets []snippet) (string, bool, int) {
	t.Helper()
	tmp := t.TempDir()
	overlay := map[string]string{}
	var pkgs []string
	var names [][]string
	for i, s := range snippets {
		fns := testFuncs(s)
		if len(fns) == 0 {
			continue
		}
		src, err := wrap(s, mdRoot)
		if err != nil {
			return err.Error(), true, 0
		}
		file := filepath.Join(tmp, fmt.Sprintf("t%03d_test.go", i))
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		dir := fmt.Sprintf("docs/snippetrun/t%03d", i)
		overlay[filepath.Join(root, dir, "snippet_test.go")] = file
		pkgs = append(pkgs, "./"+dir)
		names = append(names, fns)
	}
	if len(pkgs) == 0 {
		return "", false, 0
	}
	ov := writeOverlay(t, tmp, overlay)
	bin := filepath.Join(tmp, "bin") + string(filepath.Separator)
	var out bytes.Buffer
	build := exec.Command("go", append([]string{"test", "-c", "-vet=off", "-overlay=" + ov, "-o", bin}, pkgs...)...)
	build.Dir = root
	build.Stdout, build.Stderr = &out, &out
	failed := build.Run() != nil
	clean := func() string { return strings.ReplaceAll(out.String(), mdRoot+string(filepath.Separator), "") }
	if failed {
		return clean(), true, len(pkgs)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ONCEGATE_") {
			env = append(env, kv)
		}
	}
	for i, pkg := range pkgs {
		run := exec.Command(filepath.Join(bin, filepath.Base(pkg)+".test"), "-test.run", "^("+strings.Join(names[i], "|")+")$")
		run.Dir, run.Env = tmp, env
		run.Stdout, run.Stderr = &out, &out
		if err := run.Run(); err != nil {
			fmt.Fprintf(&out, "%s: %v\n", pkg, err)
			failed = true
		}
	}
	return clean(), failed, len(pkgs)
}

// TestTestSnippetsPass runs the documentation's Test function snippets (a
// handler test the guide tells readers to copy must pass as written).
func TestTestSnippetsPass(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs test binaries")
	}
	root := moduleRoot(t)
	all, _ := docSnippets(t, root)
	out, failed, n := runTestSnippets(t, root, root, all)
	if n == 0 {
		t.Fatal("found no Test function snippets; the guide's handler test is gone or the detection is broken")
	}
	if failed {
		t.Fatalf("documentation test snippets fail:\n%s", out)
	}
	t.Logf("ran the tests of %d snippets", n)
}

// TestRunTestSnippetsCatchesFailure proves a failing test snippet fails the
// check, at its Markdown line, and a passing one does not.
func TestRunTestSnippetsCatchesFailure(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs test binaries")
	}
	root := moduleRoot(t)
	doc := func(cond string) string {
		return "# Run\n\n```go\nfunc TestDoc(t *testing.T) {\n\tif " + cond + " {\n\t\tt.Fatal(\"doc test failed\")\n\t}\n}\n```\n"
	}
	for _, c := range []struct {
		cond string
		fail bool
	}{{`strings.ToUpper("a") != "A"`, false}, {`strings.ToUpper("a") == "A"`, true}} {
		ss, err := extractSnippets("run.md", doc(c.cond))
		if err != nil {
			t.Fatal(err)
		}
		out, failed, n := runTestSnippets(t, root, t.TempDir(), ss)
		if n != 1 || failed != c.fail || c.fail && !strings.Contains(out, "run.md:6") {
			t.Errorf("%s: ran %d, failed=%v, want %v at run.md:6:\n%s", c.cond, n, failed, c.fail, out)
		}
	}
}
