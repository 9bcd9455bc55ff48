package e2e_test

import "github.com/oncegate/oncegate/internal/crashwindow"

// accounting explains the supplier calls beyond one per key (crashwindow's
// rules, shared with the demo; its tests check the rules on made-up histories).
type accounting = crashwindow.Accounting

// account classifies the storm's calls with crashwindow.Account.
func account(calls []call, lines []line, kills []kill) accounting {
	cs := make([]crashwindow.Call, len(calls))
	for i, c := range calls {
		cs[i] = crashwindow.Call{Worker: c.Worker, Key: c.Key, Start: c.Start}
	}
	ls := make([]crashwindow.Line, len(lines))
	for i, l := range lines {
		ls[i] = crashwindow.Line{Worker: l.Worker, Key: l.Key, Outcome: l.Outcome, Time: l.Time}
	}
	ks := make([]crashwindow.Kill, len(kills))
	for i, k := range kills {
		ks[i] = crashwindow.Kill{Worker: k.Worker, At: k.At}
	}
	return crashwindow.Account(cs, ls, ks)
}
