package e2e_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/internal/workerproc"
)

// startWorkers starts the worker processes concurrently: the test binary in
// worker mode, configured only through the environment contract.
func (w *world) startWorkers(o worldOptions, benv []string) {
	exe, err := os.Executable()
	if err != nil {
		w.t.Fatal(err)
	}
	env := append([]string{envWorker + "=1", "ONCEGATE_NAMESPACE=" + testenv.UniqueName(w.t, "e2e"),
		"ONCEGATE_MODE=" + o.Mode, "ONCEGATE_KEY_ATTRIBUTE=" + o.KeyAttribute, "GOOGLE_CLOUD_PROJECT=oncegate-e2e", "ONCEGATE_OIDC_DISABLED=1",
		"GORACE=halt_on_error=1 log_path=" + filepath.Join(w.raceDir, "race")}, benv...)
	for k, v := range o.Plan.Env() {
		env = append(env, k+"="+v)
	}
	env = append(env, o.Env...)
	w.procs = make([]*workerproc.Proc, o.Workers)
	w.up = make([]atomic.Bool, o.Workers)
	errs := make([]error, o.Workers)
	var wg sync.WaitGroup
	for i := range o.Workers {
		wg.Go(func() {
			penv := slices.Concat(env, []string{"SUPPLIER_URL=" + w.supSrv.URL + workerSuffix(i)})
			w.procs[i], errs[i] = workerproc.Start(w.ctx, []string{exe, "-test.run=^$"}, penv, w.book.sink(i))
			w.up[i].Store(errs[i] == nil)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			w.t.Fatalf("worker %d on %s: %v", i, w.backend, err)
		}
	}
}

// killWorker takes worker i out of rotation and kills it with SIGKILL.
func (w *world) killWorker(i int) {
	w.up[i].Store(false)
	w.procs[i].Kill()
	w.book.addKill(kill{Worker: i, At: time.Now()})
}

// restartWorker restarts worker i on its port and puts it back in rotation
// once it answers /healthz.
func (w *world) restartWorker(i int) error {
	if err := w.procs[i].Restart(w.ctx); err != nil {
		return fmt.Errorf("restart worker %d: %w", i, err)
	}
	w.up[i].Store(true)
	return nil
}

// restartInBackground restarts worker i after a short pause (a new instance
// takes a moment to come up), tracked so close waits for it.
func (w *world) restartInBackground(i int) {
	w.restarts.Go(func() {
		time.Sleep(200 * time.Millisecond)
		if err := w.restartWorker(i); err != nil && w.ctx.Err() == nil {
			w.t.Errorf("%s: %v", w.backend, err)
		}
	})
}

// checkWorkers fails the test when a worker that should be running is not (it
// exited on its own: a panic, or a data race under -race), and reports the
// race detector's findings in the workers.
func (w *world) checkWorkers() {
	client := &http.Client{Timeout: 5 * time.Second}
	for i, p := range w.procs {
		if p == nil || !w.up[i].Load() {
			continue
		}
		resp, err := client.Get(p.URL() + "/healthz")
		if err != nil {
			w.t.Errorf("%s: worker %d exited on its own (it was not killed): %v", w.backend, i, err)
			continue
		}
		resp.Body.Close()
	}
	if w.raceDir == "" {
		return
	}
	reports, _ := filepath.Glob(filepath.Join(w.raceDir, "race.*"))
	for _, r := range reports {
		b, _ := os.ReadFile(r)
		w.t.Errorf("%s: the race detector fired in a worker process (%s):\n%s", w.backend, filepath.Base(r), b[:min(len(b), 8000)])
	}
}
