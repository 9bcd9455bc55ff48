package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestSweepStaleDirs(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(name string) string {
		p := filepath.Join(tmp, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	deadDir := mk(fmt.Sprintf("%sredis-%d-123", dirPrefix, dead.Process.Pid))
	ownDir := mk(fmt.Sprintf("%spostgres-%d-456", dirPrefix, os.Getpid()))
	liveDir := mk(fmt.Sprintf("%smysql-%d-789", dirPrefix, os.Getppid()))
	oddDir := mk(dirPrefix + "not-a-pid")

	sweepStaleDirs()
	if _, err := os.Stat(deadDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dir of dead pid %d kept: stat err = %v", dead.Process.Pid, err)
	}
	for _, keep := range []string{ownDir, liveDir, oddDir} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("%s removed: %v", keep, err)
		}
	}
}

func TestLookBinary(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "fake-server")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "not-exec"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := lookBinary([]string{"oncegate-missing", "fake-server"}, dir); err != nil || got != exe {
		t.Errorf("lookBinary = %q, %v; want %q", got, err, exe)
	}
	if got, err := lookBinary([]string{"not-exec"}, dir); err == nil {
		t.Errorf("lookBinary found non-executable %q", got)
	}
}

func TestReadFromKeepsTail(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	big := make([]byte, 3*logTailBytes)
	for i := range big {
		big[i] = 'a' + byte(i%26)
	}
	if err := os.WriteFile(p, big, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readFrom(p, 0); got != string(big[len(big)-logTailBytes:]) {
		t.Errorf("readFrom(0) returned %d bytes, want the last %d", len(got), logTailBytes)
	}
	if got := readFrom(p, int64(len(big)-10)); got != string(big[len(big)-10:]) {
		t.Errorf("readFrom(len-10) = %q, want the last 10 bytes", got)
	}
}
