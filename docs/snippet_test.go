package docs

import (
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// modulePath is the module the snippets import.
const modulePath = "github.com/oncegate/oncegate"

// knownImports maps the package names a snippet may use without importing them
// to their import paths.
var knownImports = map[string]string{
	"bytes": "bytes", "context": "context", "errors": "errors", "fmt": "fmt", "io": "io",
	"json": "encoding/json", "log": "log", "slog": "log/slog", "http": "net/http",
	"httptest": "net/http/httptest", "os": "os", "signal": "os/signal", "sql": "database/sql",
	"strconv": "strconv", "strings": "strings", "sync": "sync", "syscall": "syscall",
	"testing": "testing", "time": "time",

	"cloudevent": modulePath + "/runtime/cloudevent", "datastoregate": modulePath + "/runtime/datastoregate",
	"dlock": modulePath + "/runtime/dlock", "fencedsink": modulePath + "/runtime/fencedsink",
	"gate": modulePath + "/runtime/gate", "gateenv": modulePath + "/runtime/gateenv",
	"gatetest": modulePath + "/runtime/gatetest", "idemhttp": modulePath + "/runtime/idemhttp",
	"memgate": modulePath + "/runtime/memgate", "push": modulePath + "/runtime/push",
	"redisgate": modulePath + "/runtime/redisgate", "sqlgate": modulePath + "/runtime/sqlgate",
	"telemetry": modulePath + "/runtime/telemetry", "sizing": modulePath + "/sizing",
	"components": modulePath + "/components", "pull": modulePath + "/runtime/pull",
	"pubsub": "cloud.google.com/go/pubsub/v2",

	"datastore": "cloud.google.com/go/datastore", "redis": "github.com/redis/go-redis/v9",
}

// Snippet modes.
const (
	modeFile  = "file"
	modeDecls = "decls"
	// modeExample is statements compiled as the body of a function without
	// results, like an Example function's (a bare return is allowed).
	modeExample = "example"
	modeBody    = "body"
)

// snippet is one ```go block of a Markdown file.
type snippet struct {
	File      string // the Markdown file, as given to extractSnippets
	Line      int    // 1-based line of the block's first code line
	Mode      string // modeFile, modeDecls or modeBody
	Given     string // declarations from the compile marker; may be empty
	GivenLine int    // 1-based line of Given's first line
	Code      string
}

func (s snippet) String() string { return fmt.Sprintf("%s:%d", s.File, s.Line) }

// extractSnippets returns the ```go blocks of a Markdown document, with the
// compile marker above each, if any. name is used in positions.
func extractSnippets(name, md string) ([]snippet, error) {
	lines := strings.Split(md, "\n")
	var out []snippet
	for i := 0; i < len(lines); i++ {
		indent, fence, info, ok := openFence(lines[i])
		if !ok {
			continue
		}
		end := i + 1
		for end < len(lines) && !closesFence(lines[end], fence) {
			end++
		}
		if end == len(lines) {
			return nil, fmt.Errorf("%s:%d: code block is never closed", name, i+1)
		}
		if lang := strings.Fields(info + " x")[0]; lang == "go" {
			code := make([]string, 0, end-i-1)
			for _, l := range lines[i+1 : end] {
				code = append(code, strings.TrimPrefix(l, indent))
			}
			s := snippet{File: name, Line: i + 2, Code: strings.Join(code, "\n")}
			if err := readMarker(lines, i, &s); err != nil {
				return nil, err
			}
			if s.Mode == "" {
				s.Mode = detectMode(s.Code)
			}
			out = append(out, s)
		}
		i = end
	}
	return out, nil
}

// openFence reports whether line opens a fenced code block, with its
// indentation, fence string and info string.
func openFence(line string) (indent, fence, info string, ok bool) {
	trimmed := strings.TrimLeft(line, " \t")
	indent = line[:len(line)-len(trimmed)]
	for _, c := range []string{"```", "~~~"} {
		if strings.HasPrefix(trimmed, c) {
			n := len(trimmed) - len(strings.TrimLeft(trimmed, c[:1]))
			return indent, trimmed[:n], strings.TrimSpace(trimmed[n:]), true
		}
	}
	return "", "", "", false
}

func closesFence(line, fence string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == ""
}

// readMarker reads the <!-- compile: … --> comment ending on the last non-blank
// line above the fence at index fenceIdx, if there is one.
func readMarker(lines []string, fenceIdx int, s *snippet) error {
	j := fenceIdx - 1
	for j >= 0 && strings.TrimSpace(lines[j]) == "" {
		j--
	}
	if j < 0 || !strings.HasSuffix(strings.TrimSpace(lines[j]), "-->") {
		return nil
	}
	start := j
	for start >= 0 && !strings.Contains(lines[start], "<!--") {
		start--
	}
	if start < 0 {
		return nil
	}
	body := strings.Join(lines[start:j+1], "\n")
	body = strings.TrimSpace(body[strings.Index(body, "<!--")+4 : strings.LastIndex(body, "-->")])
	if !strings.HasPrefix(body, "compile:") {
		return nil
	}
	first, rest, _ := strings.Cut(body, "\n")
	switch mode := strings.TrimSpace(strings.TrimPrefix(first, "compile:")); mode {
	case "", modeFile, modeDecls, modeBody, modeExample:
		s.Mode = mode
	default:
		return fmt.Errorf("%s:%d: compile marker mode %q: want file, decls, body or example", s.File, start+1, mode)
	}
	if strings.TrimSpace(rest) != "" {
		// Given starts on the line after the one holding "compile:" (0-based
		// k+1, 1-based k+2).
		for k := start; k <= j; k++ {
			if strings.Contains(lines[k], "compile:") {
				s.Given, s.GivenLine = rest, k+2
				break
			}
		}
	}
	return nil
}

// detectMode picks a mode from the code itself.
func detectMode(code string) string {
	if _, err := parser.ParseFile(token.NewFileSet(), "", code, parser.PackageClauseOnly); err == nil {
		return modeFile
	}
	if _, err := parser.ParseFile(token.NewFileSet(), "", "package p\n"+code, parser.SkipObjectResolution); err == nil {
		return modeDecls
	}
	return modeBody
}

// wrap turns a snippet into a compilable Go file. root is the absolute
// directory the snippet's File is relative to, for //line directives.
func wrap(s snippet, root string) (string, error) {
	pos := func(line int) string { return fmt.Sprintf("//line %s:%d:1\n", filepath.Join(root, s.File), line) }
	given := ""
	if s.Given != "" {
		given = pos(s.GivenLine) + s.Given + "\n"
	}
	var head, tail string
	switch s.Mode {
	case modeFile:
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "", s.Code, parser.PackageClauseOnly)
		if err != nil {
			return "", fmt.Errorf("%s: %w", s, err)
		}
		pkg := f.Name.Name
		if pkg == "main" {
			if !strings.Contains(s.Code, "func main()") {
				return "", fmt.Errorf("%s: a package main snippet must declare func main", s)
			}
			pkg = "snippetmain" // type-check without linking
		}
		lines := strings.Split(s.Code, "\n")
		clause := fset.Position(f.Name.End()).Line // 1-based within the code
		head = "package " + pkg + "\n"
		tail = pos(s.Line+clause) + strings.Join(lines[clause:], "\n") + "\n" + given
	case modeDecls:
		head = "package snippet\n"
		tail = pos(s.Line) + s.Code + "\n" + given
	case modeBody, modeExample:
		head = "package snippet\n"
		uses, err := topLevelNames(s.Code)
		if err != nil {
			return "", fmt.Errorf("%s: %w", s, err)
		}
		sig, ret := "func _() error {\n", "\treturn nil\n}\n"
		if s.Mode == modeExample {
			sig, ret = "func _() {\n", "}\n"
		}
		tail = given + sig + pos(s.Line) + s.Code + "\n//line snippet-wrapper:1\n"
		for _, n := range uses {
			tail += "\t_ = " + n + "\n"
		}
		tail += ret
	default:
		return "", fmt.Errorf("%s: unknown mode %q", s, s.Mode)
	}
	imports, err := missingImports(head + tail)
	if err != nil {
		return "", fmt.Errorf("%s: %w", s, err)
	}
	if len(imports) > 0 {
		head += "\nimport (\n"
		for _, p := range imports {
			head += "\t" + fmt.Sprintf("%q", p) + "\n"
		}
		head += ")\n"
	}
	return head + "\n" + tail, nil
}

// topLevelNames returns the variables a block of statements declares at its
// top level, so the wrapper can mark them used.
func topLevelNames(code string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "", "package p\nfunc _() {\n"+code+"\n}", parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var names []string
	add := func(id *ast.Ident) {
		if id != nil && id.Name != "_" && !seen[id.Name] {
			seen[id.Name] = true
			names = append(names, id.Name)
		}
	}
	for _, st := range f.Decls[0].(*ast.FuncDecl).Body.List {
		switch st := st.(type) {
		case *ast.AssignStmt:
			if st.Tok == token.DEFINE {
				for _, e := range st.Lhs {
					id, _ := e.(*ast.Ident)
					add(id)
				}
			}
		case *ast.DeclStmt:
			if gd, ok := st.Decl.(*ast.GenDecl); ok && gd.Tok == token.VAR {
				for _, sp := range gd.Specs {
					for _, id := range sp.(*ast.ValueSpec).Names {
						add(id)
					}
				}
			}
		}
	}
	return names, nil
}

// missingImports returns, sorted, the import paths of the known package names
// src uses as selector bases without declaring or importing them.
func missingImports(src string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	declared := map[string]bool{}
	for _, im := range f.Imports {
		name := filepath.Base(strings.Trim(im.Path.Value, `"`))
		if im.Name != nil {
			name = im.Name.Name
		}
		declared[name] = true
	}
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				for _, e := range n.Lhs {
					if id, ok := e.(*ast.Ident); ok {
						declared[id.Name] = true
					}
				}
			}
		case *ast.RangeStmt:
			for _, e := range []ast.Expr{n.Key, n.Value} {
				if id, ok := e.(*ast.Ident); ok && n.Tok == token.DEFINE {
					declared[id.Name] = true
				}
			}
		case *ast.ValueSpec:
			for _, id := range n.Names {
				declared[id.Name] = true
			}
		case *ast.Field:
			for _, id := range n.Names {
				declared[id.Name] = true
			}
		case *ast.TypeSpec:
			declared[n.Name.Name] = true
		case *ast.FuncDecl:
			declared[n.Name.Name] = true
		}
		return true
	})
	var paths []string
	for name := range used {
		if p, ok := knownImports[name]; ok && !declared[name] {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	return paths, nil
}

// docFiles returns the Markdown files whose snippets, links and commands the
// tests check, relative to the module root.
func docFiles(root string) ([]string, error) {
	files := []string{"README.md", "CHANGELOG.md", "RELEASING.md"}
	more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	for _, m := range more {
		files = append(files, filepath.Join("docs", filepath.Base(m)))
	}
	var present []string
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(root, f)); err == nil {
			present = append(present, f)
		}
	}
	return present, nil
}

// gofmtClean reports whether a snippet's code is formatted as gofmt would
// format it. A body is checked inside a function, one tab deeper; one that
// spans a raw string across lines is not checked.
func gofmtClean(s snippet) (bool, error) {
	switch s.Mode {
	case modeFile:
		out, err := format.Source([]byte(s.Code))
		return err == nil && strings.TrimSpace(string(out)) == strings.TrimSpace(s.Code), err
	case modeDecls:
		const head = "package p\n\n"
		out, err := format.Source([]byte(head + s.Code))
		return err == nil && strings.TrimSpace(strings.TrimPrefix(string(out), head)) == strings.TrimSpace(s.Code), err
	}
	for _, l := range strings.Split(s.Code, "\n") {
		if strings.Count(l, "`")%2 == 1 {
			return true, nil
		}
	}
	lines := strings.Split(s.Code, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "\t" + l
		}
	}
	const head, tail = "package p\n\nfunc _() {\n", "\n}\n"
	out, err := format.Source([]byte(head + strings.Join(lines, "\n") + tail))
	if err != nil {
		return false, err
	}
	body := strings.TrimSuffix(strings.TrimPrefix(string(out), head), tail)
	got := strings.Split(body, "\n")
	for i, l := range got {
		got[i] = strings.TrimPrefix(l, "\t")
	}
	return strings.TrimSpace(strings.Join(got, "\n")) == strings.TrimSpace(s.Code), nil
}
