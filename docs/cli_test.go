package docs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// cliCall is one invocation of the oncegate CLI found in a shell block.
type cliCall struct {
	Where string   // "file:line"
	Verb  string   // "" for a bare `oncegate`
	Flags []string // long flags as written, without values: "--lease"
}

var envAssign = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// cliCalls returns the oncegate invocations in md's ```sh, ```bash, ```shell and
// ```console blocks: a command word `oncegate` (any path ending in /oncegate)
// or `go run ./cmd/oncegate`, after optional VAR=value assignments, in each
// part of a pipeline or command list. Continued lines (trailing \) are joined.
func cliCalls(name, md string) []cliCall {
	var calls []cliCall
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		_, fence, info, ok := openFence(lines[i])
		if !ok {
			continue
		}
		lang := strings.Fields(info + " x")[0]
		shell := lang == "sh" || lang == "bash" || lang == "shell" || lang == "console"
		j := i + 1
		for ; j < len(lines) && !closesFence(lines[j], fence); j++ {
			if !shell {
				continue
			}
			start, cmd := j, lines[j]
			for strings.HasSuffix(strings.TrimSpace(cmd), `\`) && j+1 < len(lines) {
				j++
				cmd = strings.TrimSuffix(strings.TrimSpace(cmd), `\`) + " " + lines[j]
			}
			cmd = strings.TrimPrefix(strings.TrimSpace(cmd), "$ ")
			if k := strings.Index(cmd, " #"); k >= 0 {
				cmd = cmd[:k]
			}
			for _, part := range regexp.MustCompile(`\|\||&&|[|;&]`).Split(cmd, -1) {
				if c, ok := parseCall(part); ok {
					c.Where = fmt.Sprintf("%s:%d", name, start+1)
					calls = append(calls, c)
				}
			}
		}
		i = j
	}
	return calls
}

func parseCall(part string) (cliCall, bool) {
	f := strings.Fields(part)
	for len(f) > 0 && envAssign.MatchString(f[0]) {
		f = f[1:]
	}
	switch {
	case len(f) > 0 && (f[0] == "oncegate" || strings.HasSuffix(f[0], "/oncegate")):
		f = f[1:]
	case len(f) > 2 && f[0] == "go" && f[1] == "run" && f[2] == "./cmd/oncegate":
		f = f[3:]
	default:
		return cliCall{}, false
	}
	var c cliCall
	if len(f) > 0 && !strings.HasPrefix(f[0], "-") {
		c.Verb, f = f[0], f[1:]
	}
	for _, a := range f {
		if strings.HasPrefix(a, "--") && len(a) > 2 {
			flag, _, _ := strings.Cut(a, "=")
			c.Flags = append(c.Flags, flag)
		}
	}
	return c, true
}

// TestCLICommands builds the CLI and checks that every documented invocation
// names a verb it has and flags that verb accepts.
func TestCLICommands(t *testing.T) {
	root := moduleRoot(t)
	files, err := docFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	var calls []cliCall
	for _, f := range files {
		md, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, cliCalls(f, string(md))...)
	}
	if len(calls) == 0 {
		t.Fatal("found no oncegate commands in the documentation")
	}
	bin := filepath.Join(t.TempDir(), "oncegate")
	build := exec.Command("go", "build", "-o", bin, "./cmd/oncegate")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the CLI: %v\n%s", err, out)
	}
	help := map[string]string{}
	helpOf := func(verb string) string {
		if h, ok := help[verb]; ok {
			return h
		}
		args := []string{"--help"}
		if verb != "" {
			args = []string{verb, "--help"}
		}
		out, _ := exec.Command(bin, args...).CombinedOutput()
		help[verb] = string(out)
		return help[verb]
	}
	verbs := regexp.MustCompile(`(?m)^  ([a-z][a-z-]*)\s`).FindAllStringSubmatch(helpOf(""), -1)
	known := map[string]bool{"": true}
	for _, v := range verbs {
		known[v[1]] = true
	}
	for _, c := range calls {
		if !known[c.Verb] {
			t.Errorf("%s: oncegate has no verb %q", c.Where, c.Verb)
			continue
		}
		h := helpOf(c.Verb)
		for _, f := range c.Flags {
			if !regexp.MustCompile(`(?m)\s` + regexp.QuoteMeta(f) + `\b`).MatchString(h) {
				t.Errorf("%s: oncegate %s has no flag %s", c.Where, c.Verb, f)
			}
		}
	}
	t.Logf("checked %d oncegate commands", len(calls))
}

func TestCLICallsParse(t *testing.T) {
	md := "```sh\n" +
		"ONCEGATE_BACKEND=sql oncegate inspect 42 --raw\n" +
		"go run ./cmd/oncegate sizing --lease 60s \\\n  --work-deadline=5m # trailing comment --nope\n" +
		"oncegate unresolved | head; /tmp/oncegate resolve 42 --done && echo ok\n" +
		"gcloud run services describe svc\n" +
		"```\n```text\noncegate demo --not-a-command-here\n```\n"
	got := cliCalls("x.md", md)
	want := []cliCall{
		{"x.md:2", "inspect", []string{"--raw"}},
		{"x.md:3", "sizing", []string{"--lease", "--work-deadline"}},
		{"x.md:5", "unresolved", nil},
		{"x.md:5", "resolve", []string{"--done"}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
}
