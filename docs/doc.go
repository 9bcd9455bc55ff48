// Package docs holds oncegate's prose documentation (README.md at the
// repository root, and the Markdown files in this directory) and the tests that
// keep it from rotting. It has no API; `go test ./docs/` is the point.
//
// # What the tests check
//
//   - Every ```go block in README.md, CHANGELOG.md, RELEASING.md and docs/*.md
//     compiles against the current code (TestSnippetsCompile).
//   - Every relative link in those files names a file that exists, and every
//     #anchor a heading that exists (TestLinks).
//   - Every `oncegate VERB --flag` line in their ```sh blocks names a verb and
//     flags the CLI has (TestCLICommands).
//
// # Writing a Go snippet
//
// A block is compiled in one of three modes, chosen from its first line unless
// a marker says otherwise:
//
//   - file: the block starts with a package clause and is a whole Go file.
//     A `package main` block must declare func main; it is type-checked, not
//     linked.
//   - decls: the block is top-level declarations (func, type, var, const,
//     optionally preceded by imports); it is compiled as package snippet.
//   - body: anything else is statements, compiled as the body of a function
//     returning error. Variables the block declares at its top level count as
//     used.
//   - example: statements compiled as the body of a function without results,
//     as in an Example function (a bare return is allowed); only by marker.
//
// Imports need not be written. A selector on a well-known package name (gate,
// push, dlock, sqlgate, …, context, http, time, sql, …; see knownImports in
// snippet_test.go) gets its import added, unless the name is declared in the
// snippet or imported by it.
//
// Names the prose assumes (a configured store, the user's own charge function)
// are declared in an HTML comment right above the block, invisible on GitHub:
//
//	<!-- compile: body
//	var store gate.Backend
//	func charge(ctx context.Context, order []byte, key string, fence int64) error { return nil }
//	-->
//	```go
//	g, err := gate.New(store, nil)
//	…
//	```
//
// The first line of the comment is "compile:" optionally followed by the mode
// (file, decls, body or example); the other lines are Go declarations compiled with the
// block. Blank lines may separate the comment from the fence. Compile errors
// are reported at the Markdown file and line of the offending snippet line.
//
// Code that must not be compiled (shell, SQL, output) goes in a block tagged
// with its own language (sh, sql, text), never go.
package docs
