package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSizingOutputsInGuide runs every `oncegate sizing` command of the guide
// that is followed by a text block, and checks the block's lines appear in the
// command's output, in order: the printed plans, horizons, budgets and fixes
// are what the CLI prints today.
func TestSizingOutputsInGuide(t *testing.T) {
	root := moduleRoot(t)
	md, err := os.ReadFile(filepath.Join(root, "docs", "guide.md"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "oncegate")
	build := exec.Command("go", "build", "-o", bin, "./cmd/oncegate")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the CLI: %v\n%s", err, out)
	}
	lines := strings.Split(string(md), "\n")
	checked := 0
	for i := 0; i+4 < len(lines); i++ {
		cmd := strings.TrimSpace(lines[i+1])
		if strings.TrimSpace(lines[i]) != "```sh" || !strings.HasPrefix(cmd, "go run ./cmd/oncegate sizing ") || strings.TrimSpace(lines[i+2]) != "```" {
			continue
		}
		j := i + 3
		for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
			j++
		}
		if j >= len(lines) || strings.TrimSpace(lines[j]) != "```text" {
			continue
		}
		var want []string
		for j++; j < len(lines) && strings.TrimSpace(lines[j]) != "```"; j++ {
			want = append(want, lines[j])
		}
		out, _ := exec.Command(bin, strings.Fields(cmd)[3:]...).Output()
		got := strings.Split(string(out), "\n")
		k := 0
		for _, w := range want {
			for k < len(got) && got[k] != w {
				k++
			}
			if k == len(got) {
				t.Errorf("guide.md:%d: `%s` does not print %q (in this order); it prints:\n%s", i+2, cmd, w, out)
				break
			}
		}
		checked++
	}
	if checked < 2 {
		t.Errorf("checked %d sizing outputs in the guide, want at least 2", checked)
	}
}
