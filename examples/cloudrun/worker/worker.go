// Package worker is the reference worker of docs/design.md ("The reference worker"):
// a Pub/Sub push handler that forwards each message's data to a supplier, guarded
// by the gateway, written only against the public packages (gateenv, gate,
// push), as a user's service would be. examples/cloudrun's main runs it; the
// demo (`oncegate worker`) and the end-to-end tests run that same code.
//
// Per message it POSTs the data to SupplierURL with the headers Idempotency-Key
// (the gateway key) and X-Fencing-Token (the claim's fence). A non-2xx answer is
// a body error, so the message is nacked and redelivered by the retry policy.
package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/push"
)

// Headers the worker sends to the supplier.
const (
	HeaderIdempotencyKey = "Idempotency-Key"
	HeaderFencingToken   = "X-Fencing-Token"
)

// Config configures the worker's body.
type Config struct {
	// SupplierURL receives one POST per message; required.
	SupplierURL string
	// KeyAttribute, when set, takes the idempotency key from this message
	// attribute (a business key, so a republished order under a new message id is
	// still one order); a message without it fails closed. Empty: the message id.
	// It is matched as push.Message.Attribute matches: exactly in a wrapped
	// push, case-insensitively in an unwrapped one (attributes arrive as HTTP
	// headers).
	KeyAttribute string
	// Mode is the push verb (lock by default).
	Mode push.Mode
	// Client posts to the supplier. Default http.DefaultClient (the gateway's
	// work deadline bounds each call through the context).
	Client *http.Client
}

// ErrSupplier is the body error for a supplier's non-2xx answer.
var ErrSupplier = errors.New("worker: supplier refused the order")

// Handler returns the push handler the worker serves on "/".
func Handler(g *gate.Gate, cfg Config, opts *push.Options) (http.Handler, error) {
	if err := checkSupplierURL(cfg.SupplierURL); err != nil {
		return nil, err
	}
	client := cfg.Client
	if client == nil {
		client = http.DefaultClient
	}
	o := push.Options{}
	if opts != nil {
		o = *opts
	}
	o.Mode = cfg.Mode
	if attr := cfg.KeyAttribute; attr != "" {
		o.KeyFunc = push.AttributeKey(attr)
	}
	return push.NewHandler(g, func(ctx context.Context, m *push.Message, c gate.Claim) error {
		return Forward(ctx, client, cfg.SupplierURL, m.Data, c)
	}, &o)
}

// checkSupplierURL accepts an absolute http or https URL with a host and no
// control characters: a file: URL, a scheme-less one or one holding a newline
// would fail every delivery (each message nacked until dead-lettered), so the
// worker refuses it at start. The error names the variable, not the value
// (it may carry credentials).
func checkSupplierURL(raw string) error {
	const want = "an absolute http:// or https:// URL with a host, such as https://supplier.example/orders"
	if raw == "" {
		return errors.New("SUPPLIER_URL: required; want " + want)
	}
	if strings.ContainsFunc(raw, unicode.IsControl) {
		return errors.New("SUPPLIER_URL: holds a control character (a newline?); want " + want)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return errors.New("SUPPLIER_URL: malformed; want " + want)
	}
	return nil
}

// Forward POSTs data to url with the claim's key as Idempotency-Key and its
// fence as X-Fencing-Token. A non-2xx answer is an error matching ErrSupplier.
func Forward(ctx context.Context, client *http.Client, url string, data []byte, c gate.Claim) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderIdempotencyKey, c.Key)
	req.Header.Set(HeaderFencingToken, strconv.FormatInt(c.Fence, 10))
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("post to supplier: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("%w: status %d", ErrSupplier, resp.StatusCode)
	}
	return nil
}
