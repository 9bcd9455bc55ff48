package faults_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/oncegate/oncegate/examples/cloudrun/worker"
	"github.com/oncegate/oncegate/runtime/fencedsink"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gateenv"
	"github.com/oncegate/oncegate/runtime/push"
)

// Variables of the zombie worker, beside the runtime's contract (gateenv) and
// the reference worker's PORT and SUPPLIER_URL.
const (
	envWorkerName = "FAULTS_WORKER_NAME"  // names the worker to the hold point
	envHoldURL    = "FAULTS_HOLD_URL"     // called inside the body before any write
	envSinkDSN    = "FAULTS_SINK_DSN"     // PostgreSQL of the fenced sink
	envSinkTable  = "FAULTS_SINK_TABLE"   // the sink's fence table
	envEffects    = "FAULTS_SINK_EFFECTS" // the sink's effects table
)

// zombieMain runs a worker whose body, per message, first calls the test's hold
// point (where the test may freeze the process with SIGSTOP), then forwards the
// data to the supplier and writes the effect to a fenced PostgreSQL sink, both
// with the claim's fence. It ignores its work deadline after the hold point (the
// worst zombie: one whose writes were already under way when it froze), and
// treats a stale-fence refusal as "a newer holder owns the key": it returns nil,
// so the gate's complete decides (fenced out).
func zombieMain(getenv func(string) string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	cfg, err := gateenv.New(ctx, &gateenv.Options{Getenv: getenv, Logger: log})
	if err != nil {
		return err
	}
	defer cfg.Close()
	g, err := cfg.NewGate()
	if err != nil {
		return err
	}
	db, err := sql.Open("pgx", getenv(envSinkDSN))
	if err != nil {
		return err
	}
	defer db.Close()
	sink, err := fencedsink.New(getenv(envSinkTable), nil)
	if err != nil {
		return err
	}
	name, effects := getenv(envWorkerName), getenv(envEffects)
	body := func(ctx context.Context, m *push.Message, c gate.Claim) error {
		wctx := context.WithoutCancel(ctx)
		if _, err := post(wctx, getenv(envHoldURL), name, m.Data, c); err != nil {
			return fmt.Errorf("hold point: %w", err)
		}
		stale := false
		status, err := post(wctx, getenv(worker.EnvSupplierURL), name, m.Data, c)
		switch {
		case err != nil:
			return err
		case status == http.StatusConflict:
			log.Warn("zombie: the supplier refused a stale fence", "key", c.Key, "fence", c.Fence)
			stale = true
		case status < 200 || status > 299:
			return fmt.Errorf("%w: status %d", worker.ErrSupplier, status)
		}
		err = sink.Term(c.Key, c.Fence).Write(wctx, db, func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO `+effects+` (key, token) VALUES ($1, $2)`, c.Key, c.Fence)
			return err
		})
		switch {
		case errors.Is(err, fencedsink.ErrStaleToken):
			log.Warn("zombie: the fenced sink refused a stale fence", "key", c.Key, "fence", c.Fence)
			return nil
		case err != nil:
			return err
		case stale:
			return fmt.Errorf("the sink took fence %d that the supplier refused", c.Fence)
		}
		return nil
	}
	h, err := push.NewHandler(g, body, cfg.PushOptions())
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/", h)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	ln, err := net.Listen("tcp", "127.0.0.1:"+getenv(worker.EnvPort))
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// post POSTs data to url with the worker's name and the claim's key and fence,
// and returns the status.
func post(ctx context.Context, url, name string, data []byte, c gate.Claim) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return 0, err
	}
	req.Header.Set("X-Worker", name)
	req.Header.Set("X-Worker-Pid", strconv.Itoa(os.Getpid()))
	req.Header.Set(worker.HeaderIdempotencyKey, c.Key)
	req.Header.Set(worker.HeaderFencingToken, strconv.FormatInt(c.Fence, 10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
