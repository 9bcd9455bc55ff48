package pullstorm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/oncegate/oncegate/examples/cloudrun/worker"
	"github.com/oncegate/oncegate/internal/crashwindow"
	"github.com/oncegate/oncegate/internal/emulator"
	"github.com/oncegate/oncegate/internal/supplier"
	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/internal/workerproc"
	"github.com/oncegate/oncegate/sizing"
)

// backends are the stores the pull workers share, through gateenv's contract.
var backends = []struct {
	name string
	env  func(t *testing.T) []string
}{
	{"redis", func(t *testing.T) []string {
		return []string{"ONCEGATE_BACKEND=redis", "ONCEGATE_REDIS_ADDR=" + testenv.Redis(t)}
	}},
	{"postgres", func(t *testing.T) []string {
		return []string{"ONCEGATE_BACKEND=sql", "ONCEGATE_SQL_DSN=" + testenv.Postgres(t)}
	}},
	{"sqlite", func(t *testing.T) []string {
		return []string{"ONCEGATE_BACKEND=sql", "ONCEGATE_SQL_DSN=sqlite:" + filepath.Join(t.TempDir(), "records.db")}
	}},
	{"datastore", func(t *testing.T) []string {
		return []string{"ONCEGATE_BACKEND=datastore", "DATASTORE_EMULATOR_HOST=" + testenv.DatastoreEmulator(t),
			"ONCEGATE_DATASTORE_KIND=" + testenv.UniqueName(t, "PullRecord")}
	}},
}

// stormPlan is the workers' plan: a 6 s lease renewed every 2 s over a 3 s work
// deadline, a 2 s store timeout (the default; the emulators on a loaded 2-core
// machine need it), the client's extension bounded to 10 s steps so a killed
// worker's messages come back within the subscription's 10 s ack deadline, flow
// control within the pool, a 10 s shutdown grace.
var stormPlan = sizing.PullPlan{
	Plan: sizing.Plan{Lease: 6 * time.Second, Heartbeat: 2 * time.Second, WorkDeadline: 3 * time.Second,
		AckDeadline: 10 * time.Second, MinBackoff: time.Second, MaxBackoff: 2 * time.Second,
		StoreTimeout: 2 * time.Second, ShutdownGrace: 10 * time.Second},
	MaxExtensionPeriod: 10 * time.Second, BackendConnections: 8,
}

// tightPlan is the plan ONCEGATE_PULL_STORM_PLAN=tight selects: the storm's
// earlier, tighter numbers (a 3 s lease renewed every second over a 2 s work
// deadline, a 1 s store timeout), under which a loaded run once showed
// repeated calls no kill explained (docs/RELIABILITY.md, "Pull crash storm").
var tightPlan = sizing.PullPlan{
	Plan: sizing.Plan{Lease: 3 * time.Second, Heartbeat: time.Second, WorkDeadline: 2 * time.Second,
		AckDeadline: 10 * time.Second, MinBackoff: time.Second, MaxBackoff: 2 * time.Second,
		StoreTimeout: time.Second, ShutdownGrace: 10 * time.Second},
	MaxExtensionPeriod: 10 * time.Second, BackendConnections: 8,
}

// planFor returns the plan ONCEGATE_PULL_STORM_PLAN names: "" or "default"
// (stormPlan), or "tight" (tightPlan).
func planFor(t *testing.T) sizing.PullPlan {
	switch v := os.Getenv("ONCEGATE_PULL_STORM_PLAN"); v {
	case "", "default":
		return stormPlan
	case "tight":
		return tightPlan
	default:
		t.Fatalf("ONCEGATE_PULL_STORM_PLAN=%q: want default or tight", v)
		return sizing.PullPlan{}
	}
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive whole number", name, v)
	}
	return n
}

// TestPullCrashStorm publishes orders (a tenth of them republished under a new
// message id with the same business key), SIGKILLs pull workers while they
// work, restarts them, then stops them with SIGTERM, and checks that every
// order reached the supplier once, apart from calls a kill cut between the call
// and the done record.
func TestPullCrashStorm(t *testing.T) {
	plan := planFor(t)
	if err := plan.Validate(); err != nil {
		t.Fatalf("storm plan: %v", err)
	}
	orders, kills := envInt(t, "ONCEGATE_PULL_STORM_ORDERS", 60), envInt(t, "ONCEGATE_PULL_STORM_KILLS", 6)
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			storm(t, plan, b.env(t), orders, kills)
		})
	}
}

func storm(t *testing.T, plan sizing.PullPlan, benv []string, orders, kills int) {
	start := time.Now()
	// The bound on the whole run: the emulators on a loaded 2-core machine
	// deliver a few orders a second.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute+time.Duration(orders)*time.Second)
	defer cancel()
	host := testenv.PubSubEmulator(t)
	base := testenv.UniqueName(t, "orders")
	topic, sub := "projects/"+project+"/topics/"+base, "projects/"+project+"/subscriptions/"+base+"-pull"
	admin := newClient(t, host)
	if _, err := admin.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topic}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
		Name: sub, Topic: topic, AckDeadlineSeconds: int32(plan.WithDefaults().AckDeadline / time.Second),
	}); err != nil {
		t.Fatal(err)
	}

	book := &book{sup: supplier.New()}
	supSrv := httptest.NewServer(book)
	t.Cleanup(supSrv.Close)

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := append([]string{envWorker + "=1", "ONCEGATE_NAMESPACE=" + testenv.UniqueName(t, "pull"),
		worker.EnvKeyAttribute + "=order", "ONCEGATE_PULL_SUBSCRIPTION=" + sub, "GOOGLE_CLOUD_PROJECT=" + project,
		"PUBSUB_EMULATOR_HOST=" + host}, benv...)
	for k, v := range plan.Env() {
		env = append(env, k+"="+v)
	}
	const workers = 3
	procs := make([]*workerproc.Proc, workers)
	for i := range workers {
		wenv := append(append([]string(nil), env...), worker.EnvSupplierURL+"="+supSrv.URL+"/w/"+strconv.Itoa(i))
		if procs[i], err = workerproc.Start(ctx, []string{exe, "-test.run=^$"}, wenv, book.sink(i)); err != nil {
			t.Fatalf("worker %d: %v", i, err)
		}
	}
	t.Cleanup(func() {
		for _, p := range procs {
			p.Kill()
		}
	})

	rng := rand.New(rand.NewPCG(uint64(start.UnixNano()), 7))
	var msgs []*pubsubpb.PubsubMessage
	for n := range orders {
		key := fmt.Sprintf("o-%04d", n)
		data, _ := json.Marshal(supplier.Order{Order: key, SlowMS: rng.IntN(400)})
		msgs = append(msgs, &pubsubpb.PubsubMessage{Data: data, Attributes: map[string]string{"order": key}})
		if n%10 == 0 { // republished: a new id, the same order
			msgs = append(msgs, &pubsubpb.PubsubMessage{Data: data, Attributes: map[string]string{"order": key}})
		}
	}
	for len(msgs) > 0 {
		batch := msgs[:min(len(msgs), 100)]
		msgs = msgs[len(batch):]
		if _, err := admin.TopicAdminClient.Publish(ctx, &pubsubpb.PublishRequest{Topic: topic, Messages: batch}); err != nil {
			t.Fatalf("publish: %v", err)
		}
	}

	// The storm: kill a random worker every 300–700 ms, restart it 200 ms later.
	for range kills {
		time.Sleep(time.Duration(300+rng.IntN(400)) * time.Millisecond)
		i := rng.IntN(workers)
		book.kill(i)
		procs[i].Kill()
		time.Sleep(200 * time.Millisecond)
		if err := procs[i].Restart(ctx); err != nil {
			t.Fatalf("restart worker %d: %v", i, err)
		}
	}
	// Every order must arrive; a killed worker's messages come back after the
	// ack deadline.
	for book.sup.Report().Orders < orders && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
	stormEnd := time.Now()
	for _, p := range procs {
		p.Stop() // SIGTERM: drain and exit
		if crashed, tail := p.Exited(); crashed {
			t.Errorf("a worker exited on its own:\n%s", strings.Join(tail, "\n"))
		}
	}

	rep := book.sup.Report()
	raw, lines, ks := book.history()
	// The repeats to explain are effects: calls the supplier accepted. A call it
	// refused (a stale fence) or that its caller abandoned (the work deadline,
	// a lost lease) committed nothing, and the delivery that made it failed, so
	// running the body again is the retry the ack table asks for, not a repeat.
	var calls []crashwindow.Call
	for _, c := range book.sup.Calls() {
		if c.Committed {
			calls = append(calls, crashwindow.Call{Worker: c.Worker, Key: c.Key, Start: c.Start})
		}
	}
	a := crashwindow.Account(calls, lines, ks)
	lost := orders - rep.Orders
	t.Logf("pull storm: %d orders (+%d republished), %d kills, %d supplier calls (%d accepted, %d distinct orders); lost %d, repeats %d (explained %d by %d kills inside the window; %d after an unrecorded effect), unexplained %d; storm %s, total %s",
		orders, (orders+9)/10, len(ks), len(raw), a.Calls, rep.Orders, lost, a.Extra, a.Explained, a.KillsInWindow, a.AfterUnrecorded, a.Unexplained-a.AfterUnrecorded,
		stormEnd.Sub(start).Round(100*time.Millisecond), time.Since(start).Round(100*time.Millisecond))
	outcomes := map[string]int{}
	for _, l := range lines {
		outcomes[l.Outcome]++
	}
	renewFailed := 0
	book.mu.Lock()
	for _, es := range book.errs {
		for _, e := range es {
			if strings.Contains(e, "lease renewal failed") {
				renewFailed++
			}
		}
	}
	book.mu.Unlock()
	t.Logf("failed lease renewals (retried): %d", renewFailed)
	t.Logf("outcomes %v; supplier duplicates (accepted twice) %d, stale fences %d", outcomes, rep.Duplicates, rep.StaleFences)
	if lost != 0 {
		t.Errorf("%d orders lost (never accepted by the supplier)", lost)
	}
	// A repeat after an unrecorded effect (the supplier accepted the call, but
	// its answer was lost to the work deadline, body-failed, or the store took
	// neither the done record nor the unknown mark, not-recorded) is the gap
	// docs/design.md's ack table leaves, reported apart; any other is a failure.
	if a.AfterUnrecorded != 0 {
		t.Logf("%d repeated calls after an unrecorded effect (an accepted call whose delivery then logged body-failed or not-recorded), keys among %v", a.AfterUnrecorded, a.UnexplainedKeys)
	}
	if a.Unexplained != a.AfterUnrecorded {
		t.Errorf("%d unexplained repeated calls, keys %v", a.Unexplained-a.AfterUnrecorded, a.UnexplainedKeys)
	}
	if a.Unexplained != 0 { // each key's history, for the record
		for _, k := range a.UnexplainedKeys {
			for _, c := range book.sup.Calls() {
				if c.Key == k {
					t.Logf("  %s: call by worker %d at %s, answered %d at %s (committed %v)", k, c.Worker,
						c.Start.Format("15:04:05.000"), c.Status, c.End.Format("15:04:05.000"), c.Committed)
				}
			}
			for _, l := range lines {
				if l.Key == k {
					t.Logf("  %s: worker %d logged %s at %s", k, l.Worker, l.Outcome, l.Time.Format("15:04:05.000"))
				}
			}
			book.mu.Lock()
			for _, e := range book.errs[k] {
				t.Logf("  %s: %s", k, e)
			}
			book.mu.Unlock()
		}
	}
	if rep.StaleFences != 0 {
		t.Logf("%d calls refused for a stale fence (a fenced-out zombie)", rep.StaleFences)
	}
}

// project is the emulators' project (any ID works).
const project = "oncegate-pull"

func newClient(t *testing.T, host string) *pubsub.Client {
	t.Helper()
	c, err := pubsub.NewClient(context.Background(), project, emulator.ClientOptions(host)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// book records the supplier calls (with the calling worker, from the URL's
// /w/<index>), the workers' delivery lines and the kills.
type book struct {
	sup   *supplier.Supplier
	mu    sync.Mutex
	calls []crashwindow.Call
	lines []crashwindow.Line
	kills []crashwindow.Kill
	errs  map[string][]string // key → the errors its delivery lines carried, for a failure's dump
}

func (b *book) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/w/"))
	if err != nil {
		http.Error(w, "no worker index", http.StatusBadRequest)
		return
	}
	b.mu.Lock()
	b.calls = append(b.calls, crashwindow.Call{Worker: i, Key: r.Header.Get(worker.HeaderIdempotencyKey), Start: time.Now()})
	b.mu.Unlock()
	b.sup.ServeHTTP(w, r)
}

func (b *book) sink(i int) func(map[string]any) {
	return func(m map[string]any) {
		out, ok := m["outcome"].(string)
		if !ok {
			// The heartbeat's warnings ("lease renewal failed; retrying") carry the
			// key but no outcome: keep them for a failure's dump.
			if k, _ := m["key"].(string); k != "" {
				msg, _ := m["msg"].(string)
				e, _ := m["err"].(string)
				b.mu.Lock()
				if b.errs == nil {
					b.errs = map[string][]string{}
				}
				b.errs[k] = append(b.errs[k], fmt.Sprintf("worker %d at %v: %s %s", i, m["time"], msg, e))
				b.mu.Unlock()
			}
			return
		}
		l := crashwindow.Line{Worker: i, Outcome: out}
		l.Key, _ = m["key"].(string)
		if s, ok := m["time"].(string); ok {
			l.Time, _ = time.Parse(time.RFC3339Nano, s)
		}
		b.mu.Lock()
		b.lines = append(b.lines, l)
		if e, ok := m["err"].(string); ok && l.Key != "" {
			if b.errs == nil {
				b.errs = map[string][]string{}
			}
			b.errs[l.Key] = append(b.errs[l.Key], fmt.Sprintf("worker %d %s at %s: %s", i, out, l.Time.Format("15:04:05.000"), e))
		}
		b.mu.Unlock()
	}
}

func (b *book) kill(i int) {
	b.mu.Lock()
	b.kills = append(b.kills, crashwindow.Kill{Worker: i, At: time.Now()})
	b.mu.Unlock()
}

func (b *book) history() ([]crashwindow.Call, []crashwindow.Line, []crashwindow.Kill) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]crashwindow.Call(nil), b.calls...), append([]crashwindow.Line(nil), b.lines...), append([]crashwindow.Kill(nil), b.kills...)
}
