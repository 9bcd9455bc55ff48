package push_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/push"
)

// TestLongKeysAndLogLines sends a 4 MiB message id (it wrote one 12.6 MB log
// line and, over about 1 MB, became a poison the supplier answered 431): it is
// refused with 400 before any claim, and no log line carries more than a few
// KiB. A key at the limit runs, and its line carries a capped key.
func TestLongKeysAndLogLines(t *testing.T) {
	for _, tc := range []struct {
		name    string
		id      string
		status  int
		outcome string
	}{
		{"4 MiB id", strings.Repeat("9", 4<<20), 400, gate.OutcomeKeyTooLong.String()},
		{"one byte over", strings.Repeat("9", push.DefaultMaxKeyBytes+1), 400, gate.OutcomeKeyTooLong.String()},
		{"at the limit", strings.Repeat("9", push.DefaultMaxKeyBytes), 204, "ran"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil, nil)
			ran := 0
			h, err := push.NewHandler(e.gate, func(context.Context, *push.Message, gate.Claim) error { ran++; return nil },
				&push.Options{AdapterOptions: push.AdapterOptions{Logger: e.log}})
			if err != nil {
				t.Fatal(err)
			}
			body, _ := json.Marshal(map[string]any{"message": map[string]any{"messageId": tc.id}})
			res := post(t, h, body, nil)
			if res.StatusCode != tc.status || res.Header.Get(push.HeaderOutcome) != tc.outcome {
				t.Fatalf("status %d %s, want %d %s", res.StatusCode, res.Header.Get(push.HeaderOutcome), tc.status, tc.outcome)
			}
			if tc.status == 400 && (ran != 0 || e.store.Len() != 0) {
				t.Errorf("refused key: ran %d, %d records", ran, e.store.Len())
			}
			lines := strings.Split(strings.TrimSpace(e.logs.String()), "\n")
			for _, l := range lines {
				if len(l) > 4<<10 {
					t.Errorf("log line of %d bytes: %.200s…", len(l), l)
				}
			}
			if !strings.Contains(e.logs.String(), "sha256:") {
				t.Errorf("no capped value in the log:\n%.1000s", e.logs.String())
			}
		})
	}
}

// TestMaxKeyBytesOption: a larger limit is honoured, a negative one refused.
func TestMaxKeyBytesOption(t *testing.T) {
	e := newEnv(t, nil, nil)
	h, err := push.NewHandler(e.gate, func(context.Context, *push.Message, gate.Claim) error { return nil },
		&push.Options{AdapterOptions: push.AdapterOptions{Logger: e.log, MaxKeyBytes: 4096}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"message": map[string]any{"messageId": strings.Repeat("7", 4096)}})
	if res := post(t, h, body, nil); res.StatusCode != http.StatusNoContent {
		t.Errorf("4,096-byte key with MaxKeyBytes 4096: status %d", res.StatusCode)
	}
	if _, err := push.NewHandler(e.gate, func(context.Context, *push.Message, gate.Claim) error { return nil },
		&push.Options{AdapterOptions: push.AdapterOptions{MaxKeyBytes: -1}}); err == nil || !strings.Contains(err.Error(), "MaxKeyBytes") {
		t.Errorf("negative MaxKeyBytes: %v", err)
	}
}
