package docs

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// fileRef matches a file a comment names: a Markdown file with a path
// ("docs/guide.md") or one of the repository's top-level documents
// ("README.md", "CHANGELOG.md").
var fileRef = regexp.MustCompile(`(?:^|[\s("'` + "`" + `])((?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_-]+\.md|[A-Z][A-Z_]+\.md)\b`)

// brokenCommentRefs returns one line per file named in a comment of a Go file
// below root that exists neither relative to root nor to the Go file's folder.
func brokenCommentRefs(root string) ([]string, error) {
	var bad []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				for _, m := range fileRef.FindAllStringSubmatch(c.Text, -1) {
					ref := m[1]
					if exists(filepath.Join(root, ref)) || exists(filepath.Join(filepath.Dir(path), ref)) {
						continue
					}
					bad = append(bad, fmt.Sprintf("%s:%d: comment names %s, which does not exist",
						rel, fset.Position(c.Pos()).Line, ref))
				}
			}
		}
		return nil
	})
	return bad, err
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestCommentFileRefs fails when a Go comment points a reader at a document
// the repository does not have (a moved doc, or one that lives outside it).
func TestCommentFileRefs(t *testing.T) {
	bad, err := brokenCommentRefs(moduleRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b)
	}
}

func TestBrokenCommentRefs(t *testing.T) {
	root := t.TempDir()
	write := func(name, body string) { writeFile(t, root, name, body) }
	write("docs/guide.md", "# Guide\n")
	write("pkg/notes.md", "notes\n")
	write("pkg/a.go", "// Package pkg follows docs/guide.md and notes.md,\n"+
		"// unlike ROADMAP.md and docs/gone.md.\npackage pkg\n\n"+
		"var s = \"docs/also-gone.md\" // (see `docs/missing.md`)\n")
	write("pkg/testdata/b.go", "// docs/ignored.md\npackage x\n")
	bad, err := brokenCommentRefs(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"pkg/a.go:2: comment names ROADMAP.md, which does not exist",
		"pkg/a.go:2: comment names docs/gone.md, which does not exist",
		"pkg/a.go:5: comment names docs/missing.md, which does not exist",
	}
	if strings.Join(bad, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(bad, "\n"), strings.Join(want, "\n"))
	}
}
