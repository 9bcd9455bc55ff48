package testenv

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// procStat is what /proc/<pid>/stat says of one process.
type procStat struct {
	pid, ppid, pgrp int
	state           string // "R", "S", "Z" (zombie), ...
}

// readProcs lists the processes in /proc.
func readProcs() []procStat {
	entries, _ := os.ReadDir("/proc")
	procs := make([]procStat, 0, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
		stat := string(b)
		f := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:])
		if len(f) < 3 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		pgrp, _ := strconv.Atoi(f[2])
		procs = append(procs, procStat{pid: pid, ppid: ppid, pgrp: pgrp, state: f[0]})
	}
	return procs
}

// signalTree sends sig to the process group led by pid and to every descendant of
// pid, and returns the pids it listed. Descendants need their own signal: PostgreSQL
// backends leave the group (setsid). For SIGSTOP and SIGKILL the group is stopped
// first, so no new child appears while they are listed.
func signalTree(pid int, sig syscall.Signal) map[int]bool {
	if sig == syscall.SIGSTOP || sig == syscall.SIGKILL {
		_ = syscall.Kill(-pid, syscall.SIGSTOP)
	}
	tree := map[int]bool{pid: true}
	procs := readProcs()
	for grown := true; grown; {
		grown = false
		for _, p := range procs {
			if !tree[p.pid] && (tree[p.ppid] || p.pgrp == pid) {
				tree[p.pid], grown = true, true
			}
		}
	}
	_ = syscall.Kill(-pid, sig)
	for p := range tree {
		_ = syscall.Kill(p, sig)
	}
	return tree
}

// killTree SIGKILLs the server's processes (see signalTree) and waits up to timeout
// until none of them runs (zombies hold nothing and do not count): a new postmaster
// refuses to start while a killed one's backends still hold its shared memory.
func killTree(pid int, timeout time.Duration) {
	tree := signalTree(pid, syscall.SIGKILL)
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		running := false
		for _, p := range readProcs() {
			if tree[p.pid] && p.state != "Z" && p.state != "X" {
				running = true
				break
			}
		}
		if !running {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
