package main

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
)

// rss returns the process's resident set size in bytes from /proc/self/status
// (Linux, proc(5): "VmRSS: Resident set size", in kB), or 0 when unreadable.
func rss() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Bytes()
		if v, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			f := bytes.Fields(v)
			if len(f) == 0 {
				return 0
			}
			kb, err := strconv.ParseInt(string(f[0]), 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}
