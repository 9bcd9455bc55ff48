package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// inlineLink matches [text](target) and [text](target "title"); refLink a
// reference definition "[label]: target".
var (
	inlineLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	refLink    = regexp.MustCompile(`^\s*\[[^\]]+\]:\s+(\S+)`)
	inlineCode = regexp.MustCompile("`[^`]*`")
)

// prose returns md's lines with fenced code blocks blanked out, so code is
// never read as links or headings.
func prose(md string) []string {
	lines := strings.Split(md, "\n")
	fence := ""
	for i, l := range lines {
		switch {
		case fence != "":
			if closesFence(l, fence) {
				fence = ""
			}
			lines[i] = ""
		default:
			if _, f, _, ok := openFence(l); ok {
				fence = f
				lines[i] = ""
			}
		}
	}
	return lines
}

// anchors returns the heading anchors GitHub generates for md: lower case,
// letters, digits, '-' and '_' kept, spaces turned into '-', everything else
// dropped; a repeated anchor gets "-1", "-2", ….
func anchors(md string) map[string]bool {
	out := map[string]bool{}
	count := map[string]int{}
	for _, l := range prose(md) {
		t := strings.TrimSpace(l)
		if !strings.HasPrefix(t, "#") {
			continue
		}
		t = strings.TrimSpace(strings.TrimLeft(t, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(t) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		a := b.String()
		if n := count[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		count[a]++
	}
	return out
}

// brokenLinks returns one line per relative link of the file at rel (relative
// to root) whose target file or anchor does not exist.
func brokenLinks(root, rel string) ([]string, error) {
	md, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		return nil, err
	}
	var bad []string
	for i, l := range prose(string(md)) {
		l = inlineCode.ReplaceAllString(l, "")
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(l, -1) {
			targets = append(targets, m[1])
		}
		if m := refLink.FindStringSubmatch(l); m != nil {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			file := filepath.Join(root, rel)
			if path != "" {
				file = filepath.Join(filepath.Dir(file), path)
			}
			body, err := os.ReadFile(file)
			if err != nil {
				if fi, serr := os.Stat(file); serr == nil && fi.IsDir() && anchor == "" {
					continue
				}
				bad = append(bad, fmt.Sprintf("%s:%d: %s: no such file", rel, i+1, target))
				continue
			}
			if anchor != "" && strings.HasSuffix(file, ".md") && !anchors(string(body))[anchor] {
				bad = append(bad, fmt.Sprintf("%s:%d: %s: no heading with that anchor", rel, i+1, target))
			}
		}
	}
	return bad, nil
}

// TestLinks checks every relative link and anchor of the documentation.
func TestLinks(t *testing.T) {
	root := moduleRoot(t)
	files, err := docFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		bad, err := brokenLinks(root, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bad {
			t.Error(b)
		}
	}
}

func TestAnchors(t *testing.T) {
	md := "# Keying the sink: effectively once\n## `oncegate sizing` — the plan\n## Runbook\n## Runbook\n```sh\n# not a heading\n```\n"
	got := anchors(md)
	for _, want := range []string{"keying-the-sink-effectively-once", "oncegate-sizing--the-plan", "runbook", "runbook-1"} {
		if !got[want] {
			t.Errorf("anchor %q missing from %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Error("a comment inside a code block was read as a heading")
	}
}

// writeFile writes body at name below root, making its folders.
func writeFile(t *testing.T, root, name, body string) {
	t.Helper()
	path := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBrokenLinks(t *testing.T) {
	root := t.TempDir()
	write := func(name, body string) { writeFile(t, root, name, body) }
	write("docs/guide.md", "# Guide\n## Choosing the key\n")
	write("README.md", "See [guide](docs/guide.md), [key](docs/guide.md#choosing-the-key),\n"+
		"[gone](docs/gone.md), [bad anchor](docs/guide.md#nope), [web](https://example.com/x),\n"+
		"`[not a link](nowhere.md)`, [self](#readme)\n# README\n```md\n[in code](nowhere.md)\n```\n[ref]: docs/missing.md\n")
	bad, err := brokenLinks(root, "README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"README.md:2: docs/gone.md: no such file",
		"README.md:2: docs/guide.md#nope: no heading with that anchor",
		"README.md:8: docs/missing.md: no such file",
	}
	if strings.Join(bad, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(bad, "\n"), strings.Join(want, "\n"))
	}
}
