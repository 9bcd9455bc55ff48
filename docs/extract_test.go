package docs

import (
	"strings"
	"testing"
)

func TestExtractSnippets(t *testing.T) {
	md := strings.Join([]string{
		"# Title",                              // 1
		"```go",                                // 2
		"package main",                         // 3
		"",                                     // 4
		"func main() {}",                       // 5
		"```",                                  // 6
		"<!-- an unrelated comment -->",        // 7
		"```go",                                // 8
		"func Charge() error { return nil }",   // 9
		"```",                                  // 10
		"<!-- compile: body",                   // 11
		"var store gate.Backend",               // 12
		"-->",                                  // 13
		"",                                     // 14
		"```go",                                // 15
		"g, _ := gate.New(store, nil)",         // 16
		"```",                                  // 17
		"1. A list item:",                      // 18
		"   ```go",                             // 19
		"   x := 1",                            // 20
		"   ```",                               // 21
		"```sh",                                // 22
		"```go is not a fence opener in here?", // 23
		"```",                                  // 24
		"<!-- compile: decls -->",              // 25
		"````go",                               // 26
		"var s = \"```\"",                      // 27
		"````",                                 // 28
	}, "\n")
	got, err := extractSnippets("x.md", md)
	if err != nil {
		t.Fatal(err)
	}
	want := []snippet{
		{File: "x.md", Line: 3, Mode: modeFile, Code: "package main\n\nfunc main() {}"},
		{File: "x.md", Line: 9, Mode: modeDecls, Code: "func Charge() error { return nil }"},
		{File: "x.md", Line: 16, Mode: modeBody, Given: "var store gate.Backend", GivenLine: 12, Code: "g, _ := gate.New(store, nil)"},
		{File: "x.md", Line: 20, Mode: modeBody, Code: "x := 1"},
		{File: "x.md", Line: 27, Mode: modeDecls, Code: "var s = \"```\""},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d snippets, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("snippet %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

func TestExtractErrors(t *testing.T) {
	for _, md := range []string{
		"```go\nx := 1\n", // never closed
		"<!-- compile: script -->\n```go\nx := 1\n```", // unknown mode
	} {
		if _, err := extractSnippets("x.md", md); err == nil {
			t.Errorf("no error for %q", md)
		}
	}
}

func TestWrap(t *testing.T) {
	cases := []struct {
		name string
		s    snippet
		want []string // substrings of the wrapped file
		err  string
	}{
		{
			name: "body gets imports, a line directive and uses",
			s:    snippet{File: "g.md", Line: 7, Mode: modeBody, Code: "ctx := context.Background()\nvar d = time.Second"},
			want: []string{"package snippet\n", "\"context\"", "\"time\"", "func _() error {\n//line /r/g.md:7:1\nctx :=", "_ = ctx", "_ = d", "return nil"},
		},
		{
			name: "given declarations keep their own lines",
			s:    snippet{File: "g.md", Line: 9, Mode: modeBody, Given: "var store gate.Backend", GivenLine: 4, Code: "_ = store"},
			want: []string{"//line /r/g.md:4:1\nvar store gate.Backend", modulePath + "/runtime/gate"},
		},
		{
			name: "package main is type-checked, not linked",
			s:    snippet{File: "r.md", Line: 3, Mode: modeFile, Code: "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(push.ModeLock) }"},
			want: []string{"package snippetmain\n", modulePath + "/runtime/push", "//line /r/r.md:4:1\n\nimport \"fmt\""},
		},
		{
			name: "a name the snippet declares is not imported",
			s:    snippet{File: "d.md", Line: 1, Mode: modeDecls, Code: "type gate struct{ Fence int64 }\nfunc f(g gate) int64 { return g.Fence }"},
			want: []string{"package snippet\n\n//line"},
		},
		{
			name: "package main needs func main",
			s:    snippet{File: "r.md", Line: 3, Mode: modeFile, Code: "package main\n\nfunc run() {}"},
			err:  "must declare func main",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := wrap(c.s, "/r")
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("wrapped file lacks %q:\n%s", w, got)
				}
			}
		})
	}
}

func TestGofmtClean(t *testing.T) {
	cases := []struct {
		s    snippet
		want bool
	}{
		{snippet{Mode: modeBody, Code: "x := 1\nif x > 0 {\n\tx++\n}"}, true},
		{snippet{Mode: modeBody, Code: "x:=1\nif x > 0 {\n    x++\n}"}, false},
		{snippet{Mode: modeDecls, Code: "func f() int {\n\treturn 1\n}"}, true},
		{snippet{Mode: modeDecls, Code: "func f() int { return 1 }"}, true},
		{snippet{Mode: modeDecls, Code: "func f()  int {\n  return 1\n}"}, false},
		{snippet{Mode: modeFile, Code: "package main\n\nfunc main() {}"}, true},
		{snippet{Mode: modeFile, Code: "package main\nfunc main() {}"}, false},
		{snippet{Mode: modeBody, Code: "q := `a\n  b`"}, true}, // raw string across lines: not checked
	}
	for _, c := range cases {
		if got, _ := gofmtClean(c.s); got != c.want {
			t.Errorf("gofmtClean(%q) = %v, want %v", c.s.Code, got, c.want)
		}
	}
}
