// Command pullworker is a Pub/Sub pull subscriber guarded by oncegate, for GKE,
// Compute Engine or a Cloud Run worker pool: it receives from
// $ONCEGATE_PULL_SUBSCRIPTION in $GOOGLE_CLOUD_PROJECT with the receive settings
// the ONCEGATE_PULL_* plan sized (runtime/gateenv/pullenv.New refuses an unsafe
// plan at start-up, naming the fix) and forwards each message's data to
// $SUPPLIER_URL with the headers Idempotency-Key (the gate's key) and
// X-Fencing-Token (the claim's fence). $ONCEGATE_KEY_ATTRIBUTE, when set, names
// the attribute holding a business key. SIGTERM stops receiving and lets
// running bodies finish within $ONCEGATE_PULL_DRAIN; no message is acked unless
// its body finished. It uses public packages only.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"cloud.google.com/go/pubsub/v2"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gateenv"
	"github.com/oncegate/oncegate/runtime/gateenv/pullenv"
	"github.com/oncegate/oncegate/runtime/pull"
	"github.com/oncegate/oncegate/runtime/push"

	// Every backend, so ONCEGATE_BACKEND may name any; a worker on one backend
	// imports only its package (e.g. gateenv/datastoreenv) and links only its
	// client.
	_ "github.com/oncegate/oncegate/runtime/gateenv/allbackends"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, os.Getenv, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "pullworker:", err)
		os.Exit(1)
	}
}

// run configures the worker from getenv and receives until ctx is done.
func run(ctx context.Context, getenv func(string) string, logOut io.Writer) error {
	log := slog.New(slog.NewJSONHandler(logOut, nil))
	cfg, err := pullenv.New(ctx, &gateenv.Options{Getenv: getenv, Logger: log})
	if err != nil {
		return err
	}
	defer cfg.Close()
	g, err := cfg.NewGate()
	if err != nil {
		return err
	}
	supplier := getenv("SUPPLIER_URL")
	if supplier == "" {
		return errors.New("SUPPLIER_URL is not set; want the URL that receives one POST per message")
	}
	o := cfg.PullOptions()
	if attr := getenv("ONCEGATE_KEY_ATTRIBUTE"); attr != "" {
		o.KeyFunc = push.AttributeKey(attr)
	}
	rc, err := pull.New(g, func(ctx context.Context, m *push.Message, c gate.Claim) error {
		return post(ctx, supplier, m.Data, c)
	}, o)
	if err != nil {
		return err
	}
	client, err := pubsub.NewClient(ctx, getenv("GOOGLE_CLOUD_PROJECT"))
	if err != nil {
		return fmt.Errorf("pubsub client: %w", err)
	}
	defer client.Close()
	sub := client.Subscriber(cfg.Subscription)
	sub.ReceiveSettings = cfg.ReceiveSettings()
	log.Info("pullworker: receiving", "subscription", sub.String(), "backend", cfg.BackendName)
	return rc.Receive(ctx, sub)
}

// post sends data to url carrying the claim's key and fence; a non-2xx answer
// is a body error, so the message is nacked and redelivered.
func post(ctx context.Context, url string, data []byte, c gate.Claim) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", c.Key)
	req.Header.Set("X-Fencing-Token", strconv.FormatInt(c.Fence, 10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("post to supplier: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("supplier answered %d", resp.StatusCode)
	}
	return nil
}
