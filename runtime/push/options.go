package push

import (
	"fmt"
	"log/slog"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// AdapterOptions are the options every adapter built on Guard shares: Options
// (Pub/Sub push), cloudevent.Options and GuardOptions embed them, and
// gateenv's Config.AdapterOptions fills Disabled, OIDC and Logger from the
// environment for all of them. The zero value means defaults.
type AdapterOptions struct {
	// Mode is the verb. Default ModeLock.
	Mode Mode
	// AllowUnguarded runs a delivery whose key is not resolvable without any
	// claim (fence 0), logged at warning level, instead of failing closed
	// (500, outcome "no-key", no claim).
	AllowUnguarded bool
	// MaxConcurrentReads bounds how many request bodies are read at once; a
	// request waits for a slot until its context ends (then 503, outcome
	// "busy", a nack). The read buffer grows with the bytes that arrive, never
	// past a small bound from the declared Content-Length, so the memory
	// bodies in flight pin is at most MaxConcurrentReads × the body cap and,
	// for slow senders, about what they sent. Default
	// DefaultMaxConcurrentReads.
	MaxConcurrentReads int
	// MaxKeyBytes is the longest key accepted, in bytes, before the gate's
	// namespace; a longer key answers 400 (outcome "key-too-long") before any
	// claim. Default DefaultMaxKeyBytes.
	MaxKeyBytes int
	// OIDC, when set, verifies the request's OIDC token before anything is
	// read or claimed (401 or 403 when it fails).
	OIDC *OIDCConfig
	// Disabled makes the handler a pass-through: every delivery runs unguarded
	// (fence 0, no record) and a warning is logged once, at construction. OIDC,
	// parsing and size limits still apply. For handler unit tests only
	// (ONCEGATE_DISABLED=1 sets it through gateenv). The gate may then be nil.
	Disabled bool
	// Logger receives one line per delivery (never payload bytes). Default: the
	// gate's logger, else slog.Default().
	Logger *slog.Logger
	// MeterProvider and TracerProvider default to the otel globals.
	MeterProvider  metric.MeterProvider
	TracerProvider trace.TracerProvider
}

// withDefaults validates o, naming the field, and applies the defaults.
func (o AdapterOptions) withDefaults() (AdapterOptions, error) {
	switch {
	case o.Mode != ModeLock && o.Mode != ModeMutex:
		return o, fmt.Errorf("push.AdapterOptions.Mode: %d is not ModeLock or ModeMutex", o.Mode)
	case o.MaxKeyBytes < 0:
		return o, fmt.Errorf("push.AdapterOptions.MaxKeyBytes: must be zero (default) or positive, got %d", o.MaxKeyBytes)
	case o.MaxConcurrentReads < 0:
		return o, fmt.Errorf("push.AdapterOptions.MaxConcurrentReads: must be zero (default) or positive, got %d", o.MaxConcurrentReads)
	}
	if o.MaxKeyBytes == 0 {
		o.MaxKeyBytes = DefaultMaxKeyBytes
	}
	if o.MaxConcurrentReads == 0 {
		o.MaxConcurrentReads = DefaultMaxConcurrentReads
	}
	if o.OIDC != nil {
		c, err := o.OIDC.validate()
		if err != nil {
			return o, err
		}
		o.OIDC = c
	}
	return o, nil
}
