// Command target is the worker under test in the push-path benchmarks: one
// process serving, on a loopback port, the same handler function three ways,
// over one backend chosen by flag:
//
//	POST /bare   the handler without the gateway: read the body, parse the push
//	             envelope (push.ParseRequest), run the function, answer 204
//	POST /floor  /bare plus two minimal store round trips (Redis PING, SQL
//	             SELECT 1, a Datastore Lookup of an absent key; none for memory):
//	             the least a gateway on that store could add
//	POST /gated  push.NewHandler over gate.New(backend): the gateway as a worker
//	             runs it (claim, body, complete, one log line formatted as JSON
//	             and discarded, otel no-op)
//	POST /redsync, POST /redislock  (Redis only) /bare with the function run
//	             under go-redsync's or bsm/redislock's lock on the message id,
//	             taken and released: the plain locks the gateway is compared with
//	GET  /stats  the process's resident memory and heap, and the memory
//	             backend's record count, as JSON (Stats)
//	GET  /debug/pprof/…  net/http/pprof, with -pprof
//
// It prints one JSON line, {"addr": "127.0.0.1:PORT"}, on stdout once it
// listens, and shuts down on SIGINT or SIGTERM, dropping its table or keys. The
// load generator (bench/loadgen) runs as a separate process; bench/benchrun
// starts both.
//
// Usage:
//
//	target -backend redis -dsn 127.0.0.1:6379 [-ttl 1h] [-purge 0] [-cache 0]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/oncegate/oncegate/bench/stores"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
	"github.com/oncegate/oncegate/runtime/push"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "target:", err)
		os.Exit(1)
	}
}

type config struct {
	backend stores.Kind
	dsn     string
	name    string
	addr    string
	lease   time.Duration
	ttl     time.Duration
	purge   time.Duration
	cache   int
	conns   int
	pprof   bool
}

func parseFlags() (config, error) {
	var c config
	backend := flag.String("backend", "memory", "backend: memory, sqlite, postgres, mysql, redis or datastore (the in-process fake)")
	flag.StringVar(&c.dsn, "dsn", "", "server: postgres:// URL, go-sql-driver DSN (mysql), SQLite file path, Redis host:port")
	flag.StringVar(&c.name, "name", "oncegate_bench_"+strconv.Itoa(os.Getpid()), "table, key prefix or Datastore kind of the records (dropped at exit)")
	flag.StringVar(&c.addr, "addr", "127.0.0.1:0", "listen address")
	flag.DurationVar(&c.lease, "lease", time.Minute, "gate lease")
	flag.DurationVar(&c.ttl, "ttl", time.Hour, "gate ttl: how long a done record is kept")
	flag.DurationVar(&c.purge, "purge", 0, "when positive, purge expired records at this interval (backends that are gate.Admins)")
	flag.IntVar(&c.cache, "cache", 0, "gate terminal cache size (0: off)")
	flag.IntVar(&c.conns, "max-conns", 16, "SQL or Redis connection pool size (0: the driver's default)")
	flag.BoolVar(&c.pprof, "pprof", false, "serve net/http/pprof under /debug/pprof/")
	flag.Parse()
	k, err := stores.ParseKind(*backend)
	c.backend = k
	return c, err
}

func run() error {
	cfg, err := parseFlags()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	st, err := stores.Open(ctx, cfg.backend, stores.Config{DSN: cfg.dsn, Name: cfg.name, MaxConns: cfg.conns, Drop: true})
	if err != nil {
		return err
	}
	defer func() {
		if err := st.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "target: close store:", err)
		}
	}()
	// The gateway's one line per delivery is formatted as it would be in
	// production, then discarded, so its cost counts but no I/O does.
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	g, err := gate.New(st.Backend, &gate.Options{
		Namespace: "bench", Lease: cfg.lease, TTL: cfg.ttl, CacheSize: cfg.cache, Logger: logger,
	})
	if err != nil {
		return err
	}
	gated, err := push.NewHandler(g, func(ctx context.Context, m *push.Message, _ gate.Claim) error {
		return work(ctx, m)
	}, &push.Options{AdapterOptions: push.AdapterOptions{Logger: logger}})
	if err != nil {
		return err
	}

	mux := http.NewServeMux()
	mux.Handle("POST /gated", gated)
	mux.Handle("POST /bare", bare(nil))
	mux.Handle("POST /floor", bare(st.Probe))
	handleLocks(mux, st, cfg.name, cfg.lease)
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(readStats(st))
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	if cfg.pprof {
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	}

	if cfg.purge > 0 {
		p, ok := st.Backend.(gate.Admin)
		if !ok {
			return fmt.Errorf("-purge: backend %s cannot purge", cfg.backend)
		}
		go purgeLoop(ctx, p, cfg.purge)
	}

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if err := json.NewEncoder(os.Stdout).Encode(map[string]string{"addr": ln.Addr().String()}); err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// work is the handler function both paths run: it does nothing with the
// message but look at it, so the gateway's share of the latency is as large as
// it can be.
func work(_ context.Context, m *push.Message) error {
	if m.MessageID == "" {
		return errors.New("message has no id")
	}
	return nil
}

// readPush reads and parses a push request as the bare and locked handlers
// do, answering 400 itself when it cannot (ok false).
func readPush(w http.ResponseWriter, r *http.Request) (m *push.Message, ok bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, push.DefaultMaxBodyBytes))
	if err != nil {
		http.Error(w, "read body", http.StatusBadRequest)
		return nil, false
	}
	if m, err = push.ParseRequest(r.Header, body, push.EnvelopeAuto, push.DefaultMaxDataBytes); err != nil {
		http.Error(w, "malformed push", http.StatusBadRequest)
		return nil, false
	}
	return m, true
}

// bare is the handler without the gateway: read, parse, run, answer. With
// probe set it also makes two store round trips, the /floor endpoint.
func bare(probe func(context.Context) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m, ok := readPush(w, r)
		if !ok {
			return
		}
		if probe != nil {
			for range 2 {
				if err := probe(r.Context()); err != nil {
					http.Error(w, "store", http.StatusServiceUnavailable)
					return
				}
			}
		}
		if err := work(r.Context(), m); err != nil {
			http.Error(w, "work", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// purgeLoop deletes expired records every interval until ctx ends, as an
// operator's scheduled `oncegate purge` would.
func purgeLoop(ctx context.Context, p gate.Admin, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := p.Purge(ctx, 0); err != nil && ctx.Err() == nil {
				fmt.Fprintln(os.Stderr, "target: purge:", err)
			}
		}
	}
}

// Stats is what GET /stats answers.
type Stats struct {
	// RSSBytes is the resident set size (VmRSS of /proc/self/status), 0 where
	// that file does not exist.
	RSSBytes int64 `json:"rss_bytes"`
	// HeapInuseBytes and HeapObjects are runtime.MemStats' HeapInuse and
	// HeapObjects.
	HeapInuseBytes uint64 `json:"heap_inuse_bytes"`
	HeapObjects    uint64 `json:"heap_objects"`
	NumGC          uint32 `json:"num_gc"`
	// CPUSeconds is the user and system CPU time the process used so far
	// (getrusage(2) RUSAGE_SELF).
	CPUSeconds float64 `json:"cpu_seconds"`
	Goroutines int     `json:"goroutines"`
	// Records is the memory backend's record count, expired ones included; -1
	// for other backends.
	Records int `json:"records"`
}

func readStats(st *stores.Store) Stats {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s := Stats{RSSBytes: rss(), HeapInuseBytes: ms.HeapInuse, HeapObjects: ms.HeapObjects,
		NumGC: ms.NumGC, CPUSeconds: cpuSeconds(), Goroutines: runtime.NumGoroutine(), Records: -1}
	if m, ok := st.Backend.(*memgate.Store); ok {
		s.Records = m.Len()
	}
	return s
}
