package gateenv_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gateenv"
	"github.com/oncegate/oncegate/runtime/push"
	"github.com/oncegate/oncegate/sizing"
)

// servePlan is a safe plan with the shortest ack deadline Pub/Sub allows (10 s).
var servePlan = sizing.Plan{Lease: 3 * time.Second, Heartbeat: time.Second, WorkDeadline: 4 * time.Second,
	AckDeadline: 10 * time.Second, MinBackoff: time.Second, MaxBackoff: time.Second, ShutdownGrace: 2 * time.Second}

func TestServerTimeouts(t *testing.T) {
	for _, p := range []sizing.Plan{
		servePlan,
		{Lease: 60 * time.Second, Heartbeat: 20 * time.Second, WorkDeadline: 60 * time.Second},
		{Lease: 15 * time.Minute, Heartbeat: 5 * time.Minute, WorkDeadline: 10 * time.Minute, AckDeadline: 600 * time.Second, RequestTimeout: 3600 * time.Second},
		{}, // a Disabled config's plan
	} {
		t.Run(fmt.Sprint(p.AckDeadline), func(t *testing.T) {
			d := p.WithDefaults()
			to := gateenv.ServerTimeouts(p)
			for name, v := range map[string]time.Duration{"ReadHeader": to.ReadHeader, "ReadBody": to.ReadBody, "Idle": to.Idle} {
				if v <= 0 || v >= d.AckDeadline {
					t.Errorf("%s = %s; want in (0, ack deadline %s)", name, v, d.AckDeadline)
				}
			}
			if to.Write < d.WorkDeadline || to.Write != d.RequestTimeout {
				t.Errorf("Write = %s; want the request timeout %s (at least the work deadline %s)", to.Write, d.RequestTimeout, d.WorkDeadline)
			}
			if to.Shutdown != d.ShutdownGrace {
				t.Errorf("Shutdown = %s, want the shutdown grace %s", to.Shutdown, d.ShutdownGrace)
			}
		})
	}
}

// serving starts Serve on a loopback listener with servePlan and the fake
// backend; it returns the address, Serve's result and the opener.
func serving(t *testing.T, ctx context.Context, h http.Handler, sigs ...os.Signal) (string, <-chan error, *fakeOpener) {
	t.Helper()
	e := env{"ONCEGATE_BACKEND": "fake", "ONCEGATE_NAMESPACE": "orders", "ONCEGATE_OIDC_DISABLED": "1"}
	for k, v := range servePlan.Env() {
		e[k] = v
	}
	cfg, f, err := load(t, e)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- cfg.Serve(ctx, h, &gateenv.ServeOptions{Listener: ln, Signals: sigs,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	}()
	return ln.Addr().String(), done, f
}

// readBody answers 204 once the whole body is read and the request's context
// is still live after wait, else 500.
func readBody(wait time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		time.Sleep(wait)
		if r.Context().Err() != nil {
			http.Error(w, "context ended", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// TestServeClosesStalledConnections is the regression test of a stalled body
// and an idle keep-alive left open past the ack deadline: each must be closed
// before it, while a slow handler keeps its context after its body is read.
func TestServeClosesStalledConnections(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel) // after the parallel subtests
	to := gateenv.ServerTimeouts(servePlan)
	addr, _, _ := serving(t, ctx, readBody(to.ReadBody+time.Second), sigUSR2)
	ack := servePlan.AckDeadline
	const head = "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
	for _, tc := range []struct {
		name, send string
		answer     bool // a complete request: expect one answer, then the idle close
	}{
		{name: "stalled headers", send: "POST / HTTP/1.1\r\nHost: x\r\n"},
		{name: "stalled body", send: head + "Content-Length: 100\r\n\r\n{\"message\":"},
		{name: "idle keep-alive after a slow handler", send: head + "Content-Length: 2\r\n\r\n{}", answer: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			start := time.Now()
			if _, err := io.WriteString(conn, tc.send); err != nil {
				t.Fatal(err)
			}
			_ = conn.SetReadDeadline(start.Add(ack + 5*time.Second))
			br := bufio.NewReader(conn)
			if tc.answer {
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("no answer: %v", err)
				}
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusNoContent {
					t.Fatalf("status %d; want 204: the handler's context must outlive the body deadline", resp.StatusCode)
				}
				start = time.Now()
			}
			_, err = io.Copy(io.Discard, br)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("the connection was still open %s later, past the %s ack deadline", time.Since(start).Round(time.Second), ack)
			}
			if el := time.Since(start); el >= ack {
				t.Fatalf("closed after %s; want before the %s ack deadline", el.Round(time.Millisecond), ack)
			}
		})
	}
}

// TestServeDrainsOnSIGTERM sends the process SIGTERM while a delivery runs:
// Serve stops accepting, lets the delivery finish and answer, returns nil and
// closes the backend.
func TestServeDrainsOnSIGTERM(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		w.WriteHeader(http.StatusNoContent)
	})
	addr, done, f := serving(t, context.Background(), h, syscall.SIGTERM)
	answered := make(chan int, 1)
	go func() {
		resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader("{}"))
		if err != nil {
			answered <- 0
			return
		}
		_ = resp.Body.Close()
		answered <- resp.StatusCode
	}()
	<-entered
	if err := raise(t, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(servePlan.ShutdownGrace)
	for {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			break // no longer accepting
		}
		_ = c.Close()
		if time.Now().After(deadline) {
			t.Fatal("still accepting connections after SIGTERM")
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("Serve returned %v before the in-flight delivery finished", err)
	default:
	}
	close(release)
	if got := <-answered; got != http.StatusNoContent {
		t.Fatalf("in-flight delivery answered %d; want 204 (drained)", got)
	}
	if err := <-done; err != nil {
		t.Fatalf("Serve = %v, want nil after a clean drain", err)
	}
	if f.closed != 1 {
		t.Fatalf("backend closed %d times, want 1", f.closed)
	}
}

// TestServeDrainTimeout: a delivery outliving the shutdown grace gets its
// connection closed, but Serve waits for its handler before closing the
// backend, then returns ErrDrainTimeout.
func TestServeDrainTimeout(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
	})
	ctx, cancel := context.WithCancel(context.Background())
	addr, done, f := serving(t, ctx, h, sigUSR2)
	answered := make(chan error, 1)
	go func() {
		resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader("{}"))
		if err == nil {
			_ = resp.Body.Close()
		}
		answered <- err
	}()
	<-entered
	cancel()
	if err := <-answered; err == nil {
		t.Fatal("the delivery was answered; want its connection closed when the grace ran out")
	}
	select {
	case err := <-done:
		t.Fatalf("Serve returned %v while a handler still ran", err)
	default:
	}
	if f.closed != 0 {
		t.Fatal("backend closed while a handler still ran")
	}
	close(release)
	if err := <-done; !errors.Is(err, gateenv.ErrDrainTimeout) {
		t.Fatalf("Serve = %v, want ErrDrainTimeout", err)
	}
	if f.closed != 1 {
		t.Fatalf("backend closed %d times, want 1", f.closed)
	}
}

// TestServeEmptySignalsMeansDefault is the regression test of
// Signals: []os.Signal{}, which signal.NotifyContext reads as every signal: a
// SIGWINCH must not stop Serve, and the default os.Interrupt must.
func TestServeEmptySignalsMeansDefault(t *testing.T) {
	addr, done, _ := serving(t, context.Background(), readBody(0), []os.Signal{}...)
	post := func() error {
		resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader("{}"))
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}
	if err := post(); err != nil {
		t.Fatal(err)
	}
	if err := raise(t, sigWINCH); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("Serve returned %v on SIGWINCH", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := post(); err != nil {
		t.Fatalf("not serving after SIGWINCH: %v", err)
	}
	if err := raise(t, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Serve = %v after os.Interrupt, want nil", err)
	}
}

// TestServeAnswersHealth: Serve answers GET /healthz itself, so a handler
// built from the quickstart (a push handler that refuses GET with 405) passes
// the components' default startup and liveness probes.
func TestServeAnswersHealth(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	addr, done, _ := serving(t, ctx, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusMethodNotAllowed)
	}))
	resp, err := http.Get("http://" + addr + gateenv.DefaultHealthPath)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s = %d, want 200", gateenv.DefaultHealthPath, resp.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// TestServeStalledPushBodyIsANack: a push whose body stalls past Serve's read
// deadline is answered 503 "read-failed" (a nack, redelivered), not 400
// "malformed" (dead-lettered), and runs nothing.
func TestServeStalledPushBodyIsANack(t *testing.T) {
	ran := false
	h, err := push.NewHandler(nil, func(context.Context, *push.Message, gate.Claim) error { ran = true; return nil },
		&push.Options{AdapterOptions: push.AdapterOptions{Disabled: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	addr, _, _ := serving(t, ctx, h, sigUSR2)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const stalled = "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"message\":"
	if _, err := io.WriteString(conn, stalled); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(servePlan.AckDeadline + 5*time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get(push.HeaderOutcome) != gate.OutcomeReadFailed.String() || ran {
		t.Fatalf("status %d outcome %q ran=%v; want 503 %q and no run", resp.StatusCode, resp.Header.Get(push.HeaderOutcome), ran, gate.OutcomeReadFailed.String())
	}
}
