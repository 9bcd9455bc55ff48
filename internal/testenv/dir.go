package testenv

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// dirPrefix starts the name of every server directory:
// oncegate-testenv-<kind>-<pid of the test binary>-<random>.
const dirPrefix = "oncegate-testenv-"

// logTailBytes bounds how much of a server log an error carries.
const logTailBytes = 4 << 10

var sweepOnce sync.Once

// makeDir creates a server directory in the system temp dir, after removing those
// left behind by test binaries that are no longer running.
func makeDir(kind string) (string, error) {
	sweepOnce.Do(sweepStaleDirs)
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%s-%d-", dirPrefix, kind, os.Getpid()))
	if err != nil {
		return "", fmt.Errorf("server dir: %w", err)
	}
	return dir, nil
}

// sweepStaleDirs removes the server directories of dead test binaries: those whose
// servers were never stopped by Main (their processes died with the binary).
func sweepStaleDirs() {
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, dir := range matches {
		pid, ok := dirOwner(filepath.Base(dir))
		if !ok || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		_ = os.RemoveAll(dir)
	}
}

// dirOwner parses the test binary's pid out of a server directory name.
func dirOwner(name string) (int, bool) {
	parts := strings.Split(strings.TrimPrefix(name, dirPrefix), "-")
	if len(parts) != 3 {
		return 0, false
	}
	pid, err := strconv.Atoi(parts[1])
	return pid, err == nil && pid > 0
}

// readFrom returns what a log file holds from offset on, at most its last 4 KiB.
func readFrom(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return ""
	}
	if start := info.Size() - logTailBytes; start > offset {
		offset = start
	}
	b, _ := io.ReadAll(io.NewSectionReader(f, offset, info.Size()-offset))
	return strings.TrimSpace(string(b))
}

// lookBinary finds the first of names on PATH or in dirs, which covers sbin
// directories missing from a non-root PATH.
func lookBinary(names []string, dirs ...string) (string, error) {
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
		for _, d := range dirs {
			p := filepath.Join(d, name)
			if isExecutable(p) {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("none of %s found on PATH or in %s", strings.Join(names, ", "), strings.Join(dirs, ", "))
}

// runLogged runs a setup command (initdb, mariadb-install-db) to completion with its
// output in dir/<name>.log, returning that output in the error when it fails.
func runLogged(cmd *exec.Cmd, dir, name string) error {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer logFile.Close()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Run(); err != nil {
		return &startError{msg: fmt.Sprintf("%s: %v", strings.Join(cmd.Args, " "), err), log: readFrom(logPath, 0)}
	}
	return nil
}

// isExecutable reports whether path is a regular file someone may execute.
func isExecutable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0
}
