package main

import "testing"

func TestBenchstatSpread(t *testing.T) {
	out := `goos: linux

                                            │ /tmp/ogg4.txt │
                                            │    sec/op     │
Growth/store=redis/keys=rand-2                 215.4µ ± 19%

                                            │ /tmp/ogg4.txt │
                                            │     1m/1k     │
Growth/store=redis/keys=rand-2                 987.4m ± 12%
Growth/store=sqlite/keys=rand-2                 1.258 ± 28%
geomean                                         1.072`
	for prefix, want := range map[string]string{
		"Growth/store=redis/keys=rand-":  "± 12%",
		"Growth/store=sqlite/keys=rand-": "± 28%",
		"Growth/store=none-":             "",
	} {
		if got := benchstatSpread(out, "1m/1k", prefix); got != want {
			t.Errorf("benchstatSpread(%q) = %q, want %q", prefix, got, want)
		}
	}
}
