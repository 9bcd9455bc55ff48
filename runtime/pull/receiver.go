package pull

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/push"
	"github.com/oncegate/oncegate/runtime/telemetry"
)

// Mode picks the verb a Receiver runs each message under.
type Mode int

const (
	// ModeLock de-duplicates (gate.Lock): a redelivery of a done key is skipped
	// and acked. The default.
	ModeLock Mode = iota
	// ModeMutex serializes (gate.Mutex): every delivery runs, one at a time per
	// key.
	ModeMutex
	// ModeDo is the effect ledger (gate.Do): Lock plus an optional payload
	// fingerprint (Options.Fingerprint) and waiting for a live holder
	// (Options.Wait) instead of nacking at once.
	ModeDo
)

func (m Mode) String() string {
	switch m {
	case ModeLock:
		return "lock"
	case ModeMutex:
		return "mutex"
	case ModeDo:
		return "do"
	}
	return "invalid"
}

// ErrShutdown is the cause of a body's context cancellation when Receive's
// context ended more than Options.Drain ago (read it with context.Cause). A body
// that returns because of it is nacked and its claim released.
var ErrShutdown = errors.New("oncegate: pull subscriber shutting down")

// ErrBodyPanic matches (errors.Is) a *PanicError: the body panicked.
var ErrBodyPanic = errors.New("oncegate: pull body panicked")

// PanicError is what a body's panic becomes: the Receiver recovers it, the
// gate releases the claim, and the message is nacked as body-failed
// (gate.OutcomeBodyFailed), so Pub/Sub redelivers it under the subscription's
// retry policy and, after its maximum delivery attempts, moves it to the
// dead-letter topic. It never unwraps to the panic value (an error value
// marked gate.Permanent would otherwise ack a message whose body crashed).
type PanicError struct {
	// Value is what the body passed to panic.
	Value any
}

func (e *PanicError) Error() string { return fmt.Sprintf("%v: %v", ErrBodyPanic, e.Value) }

// Is reports whether target is ErrBodyPanic.
func (e *PanicError) Is(target error) bool { return target == ErrBodyPanic }

// DefaultDrain is Options.Drain's default: 26 s, what a 30 s termination grace
// (sizing.DefaultPullShutdownGrace, Kubernetes' default
// terminationGracePeriodSeconds) leaves after a release and an ack at the 2 s
// default store timeout (sizing.DefaultStoreTimeout).
const DefaultDrain = 26 * time.Second

// HandlerFunc is the work a Receiver guards: it runs at most once per key
// (ModeLock, ModeDo) or one at a time per key (ModeMutex). m is a read-only view
// of the pulled message; c.Fence should travel with every downstream write.
// Returning an error nacks the message unless it is marked with gate.Permanent.
// ctx carries the gate's work deadline and is cancelled with ErrShutdown once the
// drain after shutdown is over.
type HandlerFunc func(ctx context.Context, m *push.Message, c gate.Claim) error

// Options configure a Receiver. The zero value (or nil) means defaults.
type Options struct {
	// Mode is the verb. Default ModeLock.
	Mode Mode
	// KeyFunc derives the key from the message, as for push. Default
	// push.MessageIDKey ("<namespace>:<messageId>"); push.AttributeKey takes a
	// business key from an attribute. No key nacks without a claim.
	KeyFunc push.KeyFunc
	// Fingerprint, under ModeDo, fingerprints the message data: the same key with
	// other data is refused as key reuse (nacked, so the dead-letter topic keeps
	// it).
	Fingerprint bool
	// Wait, under ModeDo, is how long a message whose key has a live holder
	// waits for it before nacking. Zero nacks at once.
	Wait time.Duration
	// Drain is how long bodies still running when Receive's context ends may go
	// on before their context is cancelled with ErrShutdown. Default
	// DefaultDrain; size it with sizing.PullPlan so the release and the nack land
	// inside the platform's shutdown grace.
	Drain time.Duration
	// AckTimeout bounds the wait for an ack or nack result (exactly-once
	// delivery). Default: the gate's StoreTimeout.
	AckTimeout time.Duration
	// Logger receives one line per message (never payload bytes). Default: the
	// gate's logger.
	Logger *slog.Logger
	// MeterProvider and TracerProvider default to the otel globals.
	MeterProvider  metric.MeterProvider
	TracerProvider trace.TracerProvider
}

// Receiver runs Receive callbacks through a gate. It is safe for concurrent use,
// as Subscriber.Receive requires.
type Receiver struct {
	g   *gate.Gate
	fn  HandlerFunc
	o   Options
	log *slog.Logger
	tel *telemetry.Instruments
}

// New returns a Receiver running fn through g. It returns an error naming the
// field when opts is invalid or g or fn is nil.
func New(g *gate.Gate, fn HandlerFunc, opts *Options) (*Receiver, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	switch {
	case g == nil:
		return nil, errors.New("pull.New: gate is nil")
	case fn == nil:
		return nil, errors.New("pull.New: handler func is nil")
	case o.Mode < ModeLock || o.Mode > ModeDo:
		return nil, fmt.Errorf("pull.Options.Mode: %d is not ModeLock, ModeMutex or ModeDo", o.Mode)
	case o.Wait < 0 || o.Wait > 0 && o.Mode != ModeDo:
		return nil, fmt.Errorf("pull.Options.Wait: %s; want zero, or a positive duration with ModeDo", o.Wait)
	case o.Fingerprint && o.Mode != ModeDo:
		return nil, errors.New("pull.Options.Fingerprint: only ModeDo fingerprints payloads; set Mode to ModeDo or leave it false")
	case o.Drain < 0:
		return nil, fmt.Errorf("pull.Options.Drain: must be zero (default %s) or positive, got %s", DefaultDrain, o.Drain)
	case o.AckTimeout < 0:
		return nil, fmt.Errorf("pull.Options.AckTimeout: must be zero (default) or positive, got %s", o.AckTimeout)
	}
	if o.KeyFunc == nil {
		o.KeyFunc = push.MessageIDKey
	}
	if o.Drain == 0 {
		o.Drain = DefaultDrain
	}
	if o.AckTimeout == 0 {
		o.AckTimeout = g.Options().StoreTimeout
	}
	log := o.Logger
	if log == nil {
		log = g.Options().Logger
	}
	tel, err := telemetry.New(&telemetry.Options{MeterProvider: o.MeterProvider, TracerProvider: o.TracerProvider})
	if err != nil {
		return nil, err
	}
	return &Receiver{g: g, fn: fn, o: o, log: log.With("adapter", "pull", "mode", o.Mode.String()), tel: tel}, nil
}

// Handle is a Subscriber.Receive callback without the drain: it guards m and
// acks or nacks it. Use it to compose your own Receive; Receiver.Receive adds
// the graceful shutdown.
func (r *Receiver) Handle(ctx context.Context, m *pubsub.Message) {
	r.handle(context.Background(), ctx, m, "")
}

// Receive runs sub.Receive with r's callback until ctx is done or the service
// returns a non-retryable error, which it returns. When ctx ends it stops
// receiving (callbacks that have not claimed yet nack), gives running bodies
// Options.Drain, then cancels their context with ErrShutdown, and returns once
// every callback has returned (Subscriber.Receive waits for them). Leave
// sub.ReceiveSettings.ShutdownOptions nil, or set ShutdownBehaviorWaitForProcessing
// with a timeout past Drain plus the ack timeout, so the client does not give
// up on a message whose body is still finishing.
func (r *Receiver) Receive(ctx context.Context, sub *pubsub.Subscriber) error {
	drain, cut := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cut(nil)
	stop := context.AfterFunc(ctx, func() {
		r.log.Info("oncegate: pull stopping: no new claims; running bodies may finish", "drain", r.o.Drain)
		t := time.AfterFunc(r.o.Drain, func() { cut(ErrShutdown) })
		context.AfterFunc(drain, func() { t.Stop() })
	})
	defer stop()
	name := sub.String()
	return sub.Receive(ctx, func(cctx context.Context, m *pubsub.Message) {
		r.handle(drain, cctx, m, name)
	})
}
