package gateenv_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gateenv"
	"github.com/oncegate/oncegate/runtime/push"
	"github.com/oncegate/oncegate/runtime/sqlgate"
)

// TestServeKeepsTheStoreForHandlersPastTheGrace is the regression test of a
// store closed under running handlers: with a 1 s shutdown grace and a 2.5 s
// body, the grace runs out mid-body, yet the body's done record is written
// (Serve waits for the handler before closing the store), so the redelivery
// is a duplicate instead of a second run.
func TestServeKeepsTheStoreForHandlersPastTheGrace(t *testing.T) {
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "oncegate.db")
	p := servePlan
	p.ShutdownGrace = time.Second
	e := env{"ONCEGATE_BACKEND": "sql", "ONCEGATE_SQL_DSN": dsn, "ONCEGATE_NAMESPACE": "orders", "ONCEGATE_OIDC_DISABLED": "1"}
	for k, v := range p.Env() {
		e[k] = v
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg, err := gateenv.New(context.Background(), &gateenv.Options{Getenv: e.Get, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	g, err := cfg.NewGate()
	if err != nil {
		t.Fatal(err)
	}
	entered := make(chan struct{})
	finished := make(chan error, 1)
	h, err := push.NewHandler(g, func(ctx context.Context, _ *push.Message, _ gate.Claim) error {
		close(entered)
		select {
		case <-time.After(2500 * time.Millisecond):
			finished <- nil
			return nil
		case <-ctx.Done():
			finished <- ctx.Err()
			return ctx.Err()
		}
	}, cfg.PushOptions())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cfg.Serve(ctx, h, &gateenv.ServeOptions{Listener: ln, Logger: quiet}) }()
	go func() {
		resp, err := http.Post("http://"+ln.Addr().String()+"/", "application/json", strings.NewReader(`{"message":{"messageId":"m-1"}}`))
		if err == nil {
			_ = resp.Body.Close()
		}
	}()
	<-entered
	cancel()
	if err := <-done; !errors.Is(err, gateenv.ErrDrainTimeout) {
		t.Fatalf("Serve = %v, want ErrDrainTimeout (the body outlived the 1s grace)", err)
	}
	select {
	case err := <-finished:
		if err != nil {
			t.Fatalf("the body's context ended early: %v", err)
		}
	default:
		t.Fatal("Serve returned (and closed the store) while the body still ran")
	}
	s, err := sqlgate.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec, ok, err := s.Inspect(context.Background(), g.Key("m-1"))
	if err != nil || !ok || rec.State != gate.StateDone {
		t.Fatalf("record %+v (found %v, err %v); want done", rec, ok, err)
	}
}
