package faults_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oncegate/oncegate/internal/supplier"
	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/internal/workerproc"
	"github.com/oncegate/oncegate/runtime/push"
	"github.com/oncegate/oncegate/sizing"
)

// zombiePlan is the workers' plan: a 2 s lease without a heartbeat, so a holder
// frozen for 3 s has lost its key.
var zombiePlan = sizing.Plan{Lease: 2 * time.Second, WorkDeadline: 1500 * time.Millisecond, TTL: 30 * time.Minute,
	AckDeadline: 10 * time.Second, MinBackoff: time.Second, MaxBackoff: time.Second, ShutdownGrace: 2 * time.Second}

// TestFrozenHolderIsFencedOut freezes a worker process with SIGSTOP while it
// holds a key (inside its body, before any write), lets the lease lapse, has a
// second worker process take the key over and write, and then resumes the
// first: its writes are refused at the supplier and at the fenced sink, its
// complete is fenced out (204, an alertable error logged), and each sink holds
// exactly one effect, the second holder's.
func TestFrozenHolderIsFencedOut(t *testing.T) {
	backends := []struct {
		name string
		env  func(t *testing.T) []string
	}{
		{"redis", func(t *testing.T) []string {
			return []string{"ONCEGATE_BACKEND=redis", "ONCEGATE_REDIS_ADDR=" + testenv.Redis(t)}
		}},
		{"postgres", func(t *testing.T) []string {
			_, direct := postgresVia(t, "")
			return []string{"ONCEGATE_BACKEND=sql", "ONCEGATE_SQL_DSN=" + direct}
		}},
		{"sqlite", func(t *testing.T) []string {
			return []string{"ONCEGATE_BACKEND=sql", "ONCEGATE_SQL_DSN=sqlite:" + filepath.Join(t.TempDir(), "records.db")}
		}},
		{"datastore (emulator)", datastoreEmulatorEnv},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			frozenHolder(t, b.name, b.env(t))
		})
	}
}

// waitStopped waits until the process pid is stopped (state T in
// /proc/<pid>/stat): SIGSTOP is delivered asynchronously, and the answer to
// the hold point must reach a process that is already frozen.
func waitStopped(pid string) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return fmt.Errorf("worker A (pid %s): %w", pid, err)
		}
		// The state follows the command name, which is in parentheses.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && len(stat) > i+2 && (stat[i+2] == 'T' || stat[i+2] == 't') {
			return nil
		}
		time.Sleep(time.Millisecond)
	}
	return fmt.Errorf("worker A (pid %s) is not stopped 10s after SIGSTOP", pid)
}

func frozenHolder(t *testing.T, backend string, benv []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sup := supplier.New()
	var (
		callsMu sync.Mutex
		calls   []string // worker, fence and answer of every supplier call
	)
	supSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		sup.ServeHTTP(rec, r)
		callsMu.Lock()
		calls = append(calls, r.Header.Get("X-Worker")+" fence "+r.Header.Get("X-Fencing-Token")+" → "+http.StatusText(rec.Code))
		callsMu.Unlock()
		w.WriteHeader(rec.Code)
	}))
	defer supSrv.Close()
	ft := newFencedTable(t)
	_, sinkDSN := postgresVia(t, "")

	var (
		mu     sync.Mutex
		procs  = map[string]*workerproc.Proc{}
		frozen = make(chan int64, 1)
	)
	hold := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Worker") == "A" {
			mu.Lock()
			a := procs["A"]
			mu.Unlock()
			a.Pause() // frozen inside its body; it reads this answer only when resumed
			if err := waitStopped(r.Header.Get("X-Worker-Pid")); err != nil {
				t.Error(err)
			}
			frozen <- 1
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer hold.Close()

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ns := testenv.UniqueName(t, "zombie")
	env := append([]string{envZombie + "=1", "ONCEGATE_NAMESPACE=" + ns, "SUPPLIER_URL=" + supSrv.URL,
		envHoldURL + "=" + hold.URL, envSinkDSN + "=" + sinkDSN, envSinkTable + "=" + ft.sink.Table(),
		envEffects + "=" + ft.effects}, benv...)
	for k, v := range zombiePlan.Env() {
		env = append(env, k+"="+v)
	}
	var logMu sync.Mutex
	var alerts []map[string]any
	for _, name := range []string{"A", "B"} {
		p, err := workerproc.Start(ctx, []string{exe, "-test.run=^$"}, append(env, envWorkerName+"="+name),
			func(line map[string]any) {
				if line["alert"] == true {
					logMu.Lock()
					alerts = append(alerts, line)
					logMu.Unlock()
				}
			})
		if err != nil {
			t.Fatalf("worker %s: %v", name, err)
		}
		t.Cleanup(p.Kill)
		mu.Lock()
		procs[name] = p
		mu.Unlock()
	}
	a, bproc := procs["A"], procs["B"]
	body := envelope("order-1", []byte(`{"order":"order-1"}`), 1)
	deliver := func(p *workerproc.Proc) *http.Response {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.URL()+"/", bytes.NewReader(body))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("deliver: %v", err)
			return nil
		}
		res.Body.Close()
		return res
	}

	aDone := make(chan *http.Response, 1)
	go func() { aDone <- deliver(a) }()
	select {
	case <-frozen:
	case <-ctx.Done():
		t.Fatal("worker A never reached the hold point")
	}
	t.Cleanup(a.Resume)                        // never leave a stopped process behind
	time.Sleep(zombiePlan.Lease + time.Second) // A stays frozen past its lease

	res := deliver(bproc) // the redelivery reaches B, which takes the key over
	if res == nil || res.StatusCode != 204 || res.Header.Get(push.HeaderOutcome) != "ran" {
		t.Fatalf("B's delivery: %v; want 204 ran", res)
	}
	a.Resume()
	var resA *http.Response
	select {
	case resA = <-aDone:
	case <-ctx.Done():
		t.Fatal("A never answered after SIGCONT")
	}
	if resA == nil || resA.StatusCode != 204 || resA.Header.Get(push.HeaderOutcome) != "fenced-out" {
		t.Fatalf("A's answer after SIGCONT: %v; want 204 fenced-out (ack)", resA)
	}
	rep := sup.Report()
	key := ns + ":order-1"
	if rep.Orders != 1 || rep.Duplicates != 0 || rep.StaleFences != 1 {
		callsMu.Lock()
		t.Errorf("supplier %+v, calls %q; want one order and A's stale call refused", rep, calls)
		callsMu.Unlock()
	}
	if n1, n2 := ft.effectsBy(t, key, 1), ft.effectsBy(t, key, 2); n1 != 0 || n2 != 1 {
		t.Errorf("sink effects: fence 1 ×%d, fence 2 ×%d; want only B's (fence 2)", n1, n2)
	}
	time.Sleep(200 * time.Millisecond) // A's log line follows its answer
	logMu.Lock()
	if len(alerts) != 1 || !strings.Contains(alerts[0]["msg"].(string), "fenced out") {
		t.Errorf("alert lines %v; want one fenced-out alert from A", alerts)
	}
	logMu.Unlock()
	report(t, figures{Class: "holder frozen (SIGSTOP) past its lease, then resumed", Backend: backend,
		Messages: 1, Tried: 2, Injected: 1, Processed: rep.Orders, Duplicates: rep.Duplicates + max(0, ft.effectsBy(t, key, 1)),
		Note: "the frozen holder's writes refused at the supplier and at the fenced sink; its complete fenced out (204, alert logged)"})
}
