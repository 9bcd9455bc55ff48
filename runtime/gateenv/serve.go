package gateenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/oncegate/oncegate/runtime/push"
	"github.com/oncegate/oncegate/sizing"
)

// EnvPort is the port Serve listens on; Cloud Run sets it. Source: Cloud Run
// container runtime contract, https://cloud.google.com/run/docs/container-contract
// ("Listening for requests on the correct port").
const EnvPort = "PORT"

// DefaultPort is the port Serve listens on when PORT is not set (Cloud Run's
// default value of PORT).
const DefaultPort = "8080"

// ServeOptions configure Config.Serve. The zero value (or nil) means defaults.
type ServeOptions struct {
	// Addr is the listen address. Default ":" + $PORT, or ":8080" when PORT is
	// not set.
	Addr string
	// Listener, when set, is served instead of listening on Addr.
	Listener net.Listener
	// Getenv reads PORT. Default os.Getenv.
	Getenv func(string) string
	// Signals end serving, as ctx does. Nil or empty means the default,
	// SIGTERM (Cloud Run's shutdown signal) and os.Interrupt (Ctrl-C): an empty
	// list is not "no signals" (signal.NotifyContext would then relay every
	// signal, and a SIGWINCH or SIGCHLD would stop the server).
	Signals []os.Signal
	// Logger receives the start and stop lines. Default: the gate's logger.
	Logger *slog.Logger
	// HealthPath is the path Serve answers itself, 200 "ok" to GET and HEAD
	// (no token needed), for Cloud Run's startup and liveness probes: the
	// components' HealthPath defaults to the same DefaultHealthPath. Empty
	// means DefaultHealthPath; "-" passes every request to the handler (for a
	// handler that serves a health check of its own).
	HealthPath string
}

// DefaultHealthPath is the health-check path Serve answers by default, the
// one the Pulumi components' probes use.
const DefaultHealthPath = "/healthz"

// Timeouts are the HTTP server timeouts Serve derives from a plan.
type Timeouts struct {
	// ReadHeader bounds reading a request's headers: a quarter of the ack
	// deadline, at most 10 s.
	ReadHeader time.Duration
	// ReadBody bounds reading a request's body, from the end of its headers to
	// the body's end: half the ack deadline. A stalled body is closed well
	// before Pub/Sub gives up on the push (the ack deadline is the push request's
	// timeout), and the handler never holds a claim while it waits for bytes: the
	// body is read before any claim.
	ReadBody time.Duration
	// Write bounds a request from the end of its headers to the end of its
	// answer: the plan's request timeout, the longest Cloud Run lets a request
	// run (the handler's claim, work deadline and done record fit inside it by
	// the sizing invariants).
	Write time.Duration
	// Idle bounds an idle keep-alive connection: half the ack deadline.
	Idle time.Duration
	// Shutdown bounds the drain after SIGTERM: the plan's shutdown grace. Past
	// it connections are closed, but running handlers are still waited for
	// before the backend closes (see Config.Serve).
	Shutdown time.Duration
}

// ServerTimeouts returns the timeouts for a plan (zero fields take the plan's
// documented defaults, so a Disabled config's zero plan works too).
func ServerTimeouts(p sizing.Plan) Timeouts {
	p = p.WithDefaults()
	return Timeouts{
		ReadHeader: min(p.AckDeadline/4, 10*time.Second),
		ReadBody:   p.AckDeadline / 2,
		Write:      p.RequestTimeout,
		Idle:       p.AckDeadline / 2,
		Shutdown:   p.ShutdownGrace,
	}
}

// ErrDrainTimeout is returned by Serve when deliveries were still running when
// the shutdown grace ran out: their connections were closed (Pub/Sub sees no
// answer and redelivers after the ack deadline), but Serve waited for their
// handlers to return before closing the backend, so work that finished was
// recorded done and the redelivery is a duplicate.
var ErrDrainTimeout = errors.New("gateenv: in-flight deliveries did not finish within the shutdown grace")

// Serve serves h until ctx is done or a signal of opts.Signals (default
// SIGTERM, os.Interrupt) arrives, with the server timeouts of ServerTimeouts(c.Plan):
// a stalled body or an idle keep-alive connection is closed before the ack
// deadline. When c.OIDC is set (the environment requires token verification),
// h is served behind push.RequireOIDC: every request other than GET, HEAD and
// OPTIONS must carry the push subscription's token, or it is answered 401/403
// before h sees it, so a handler built without c.AdapterOptions() (nil options, or
// hand-built options) cannot run a body for an unauthenticated push. On
// the signal it stops accepting connections, waits for in-flight
// deliveries up to the plan's shutdown grace (Cloud Run sends SIGKILL 10 s after
// SIGTERM), then closes the backend (Close). When the grace runs out first it
// closes every connection but still waits for the running handlers to return
// before closing the backend: a body that finishes after the grace records its
// done state instead of failing on a closed store (and being run again on the
// redelivery). That wait is bounded by the handlers themselves, a push or
// CloudEvent handler's by the plan's time budget (claim, work deadline,
// complete and unknown mark, each store phase bounded by the store timeout);
// a handler of your own that never returns keeps Serve from returning. It
// returns nil after a clean drain, an error wrapping ErrDrainTimeout when
// deliveries outlived the grace, or the listen or serve error; the backend is
// closed in every case, after the last handler returned.
func (c *Config) Serve(ctx context.Context, h http.Handler, opts *ServeOptions) (err error) {
	defer func() {
		if cerr := c.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("gateenv: close the backend: %w", cerr))
		}
	}()
	var o ServeOptions
	if opts != nil {
		o = *opts
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if len(o.Signals) == 0 {
		o.Signals = []os.Signal{syscall.SIGTERM, os.Interrupt}
	}
	if o.Logger == nil {
		o.Logger = c.Gate.Logger
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if c.OIDC != nil {
		if h, err = push.RequireOIDC(c.OIDC, h, o.Logger); err != nil {
			return fmt.Errorf("gateenv: serve: %w", err)
		}
	}
	h = health(h, o.HealthPath)
	ctx, stop := signal.NotifyContext(ctx, o.Signals...)
	defer stop()
	ln := o.Listener
	if ln == nil {
		addr := o.Addr
		if addr == "" {
			port := strings.TrimSpace(o.Getenv(EnvPort))
			if port == "" {
				port = DefaultPort
			}
			addr = ":" + port
		}
		if ln, err = net.Listen("tcp", addr); err != nil {
			return fmt.Errorf("gateenv: listen on %s (%s): %w", addr, EnvPort, err)
		}
	}
	t := ServerTimeouts(c.Plan)
	running := newInflight()
	defer running.wait() // deferred after c.Close, so it runs first
	srv := &http.Server{
		Handler:           running.track(bodyDeadline(h, t.ReadBody)),
		ReadHeaderTimeout: t.ReadHeader,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
		ErrorLog:          slog.NewLogLogger(o.Logger.Handler(), slog.LevelDebug),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	o.Logger.Info("oncegate: serving", "addr", ln.Addr().String(), "backend", c.BackendName)
	select {
	case err := <-errc:
		return fmt.Errorf("gateenv: serve: %w", err)
	case <-ctx.Done():
	}
	o.Logger.Info("oncegate: shutting down; draining in-flight deliveries", "grace", t.Shutdown)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), t.Shutdown)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
		o.Logger.Warn("oncegate: shutdown grace over; connections closed, waiting for running handlers before closing the backend",
			"grace", t.Shutdown, "handlers", running.count())
		return fmt.Errorf("%w (%s): %w", ErrDrainTimeout, t.Shutdown, err)
	}
	o.Logger.Info("oncegate: drained and stopped")
	return nil
}

// health answers GET and HEAD of path (DefaultHealthPath when empty; none
// when "-") with 200 "ok" and passes every other request to h.
func health(h http.Handler, path string) http.Handler {
	switch path {
	case "-":
		return h
	case "":
		path = DefaultHealthPath
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == path && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusOK)
			if r.Method == http.MethodGet {
				_, _ = io.WriteString(w, "ok\n")
			}
			return
		}
		h.ServeHTTP(w, r)
	})
}

// bodyDeadline gives each request's body d to arrive, from the end of its
// headers, and lifts the deadline once the body is read, so the server's
// background read during the handler cannot time out.
func bodyDeadline(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if r.Body != nil && r.Body != http.NoBody && rc.SetReadDeadline(time.Now().Add(d)) == nil {
			r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
		}
		h.ServeHTTP(w, r)
	})
}

type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// inflight counts the handlers running, so Serve can wait for them after the
// server closed their connections (http.Server.Close does not wait).
type inflight struct {
	mu   sync.Mutex
	n    int
	idle *sync.Cond
}

func newInflight() *inflight {
	f := &inflight{}
	f.idle = sync.NewCond(&f.mu)
	return f
}

func (f *inflight) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.n++
		f.mu.Unlock()
		defer func() {
			f.mu.Lock()
			if f.n--; f.n == 0 {
				f.idle.Broadcast()
			}
			f.mu.Unlock()
		}()
		h.ServeHTTP(w, r)
	})
}

func (f *inflight) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// wait returns once no handler runs.
func (f *inflight) wait() {
	f.mu.Lock()
	for f.n > 0 {
		f.idle.Wait()
	}
	f.mu.Unlock()
}
