package telemetry

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of every meter and tracer this package
// creates.
const ScopeName = "github.com/oncegate/oncegate/runtime"

// Instrument names. Durations are in seconds, as OpenTelemetry's semantic
// conventions recommend for histograms of time.
const (
	// MetricDeliveries counts handled deliveries, one per request, by
	// AttrAdapter, AttrMode, AttrOutcome and AttrAck. Unit "{delivery}".
	MetricDeliveries = "oncegate.deliveries"
	// MetricClaimDuration is the time from the verb's start until the body started,
	// or until the verb returned when the body did not run. Unit "s".
	MetricClaimDuration = "oncegate.claim.duration"
	// MetricBodyDuration is the time the guarded body ran. Unit "s".
	MetricBodyDuration = "oncegate.body.duration"
)

// Attribute keys on metrics and spans.
const (
	// AttrAdapter names the adapter: "push", "cloudevent".
	AttrAdapter = attribute.Key("oncegate.adapter")
	// AttrMode is the verb: "lock", "mutex", "unguarded" or "disabled".
	AttrMode = attribute.Key("oncegate.mode")
	// AttrOutcome is gate.Outcome's String: a verb's outcome or a refusal
	// such as "malformed", "too-large", "unauthenticated", "forbidden",
	// "no-key".
	AttrOutcome = attribute.Key("oncegate.outcome")
	// AttrAck reports whether the answer acknowledged the message (2xx).
	AttrAck = attribute.Key("oncegate.ack")
	// AttrKey is the namespaced idempotency key (spans only).
	AttrKey = attribute.Key("oncegate.key")
	// AttrFence is the claim's fencing token (spans only).
	AttrFence = attribute.Key("oncegate.fence")
	// AttrMessageID is the Pub/Sub message id (spans only).
	AttrMessageID = attribute.Key("messaging.message.id")
	// AttrDeliveryAttempt is Pub/Sub's delivery attempt, 0 when absent (spans
	// only).
	AttrDeliveryAttempt = attribute.Key("messaging.gcp_pubsub.message.delivery_attempt")
	// AttrHTTPStatus is the answer's HTTP status code (spans only).
	AttrHTTPStatus = attribute.Key("http.response.status_code")
)

// Options select the providers. The zero value (or nil) uses the global ones
// (otel.GetMeterProvider, otel.GetTracerProvider), which are no-ops until an SDK
// is installed.
type Options struct {
	// MeterProvider supplies the meter. Default otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// TracerProvider supplies the tracer. Default otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
}

// Instruments are the shared instruments. They are safe for concurrent use.
type Instruments struct {
	// Tracer starts the adapters' spans.
	Tracer     trace.Tracer
	deliveries metric.Int64Counter
	claimDur   metric.Float64Histogram
	bodyDur    metric.Float64Histogram
}

// New creates the instruments from o's providers. It returns an error only when
// the meter refuses an instrument.
func New(o *Options) (*Instruments, error) {
	var v Options
	if o != nil {
		v = *o
	}
	if v.MeterProvider == nil {
		v.MeterProvider = otel.GetMeterProvider()
	}
	if v.TracerProvider == nil {
		v.TracerProvider = otel.GetTracerProvider()
	}
	m := v.MeterProvider.Meter(ScopeName)
	in := &Instruments{Tracer: v.TracerProvider.Tracer(ScopeName)}
	var err error
	if in.deliveries, err = m.Int64Counter(MetricDeliveries, metric.WithUnit("{delivery}"),
		metric.WithDescription("Deliveries handled by an oncegate adapter, by outcome.")); err != nil {
		return nil, fmt.Errorf("telemetry: %s: %w", MetricDeliveries, err)
	}
	if in.claimDur, err = m.Float64Histogram(MetricClaimDuration, metric.WithUnit("s"),
		metric.WithDescription("Time from the verb's start until the body started, or until the verb returned.")); err != nil {
		return nil, fmt.Errorf("telemetry: %s: %w", MetricClaimDuration, err)
	}
	if in.bodyDur, err = m.Float64Histogram(MetricBodyDuration, metric.WithUnit("s"),
		metric.WithDescription("Time the guarded body ran.")); err != nil {
		return nil, fmt.Errorf("telemetry: %s: %w", MetricBodyDuration, err)
	}
	return in, nil
}

// Labels are the low-cardinality attributes of one delivery's metrics.
type Labels struct {
	Adapter string
	Mode    string
	Outcome string
	Ack     bool
}

func (l Labels) set() attribute.Set {
	return attribute.NewSet(AttrAdapter.String(l.Adapter), AttrMode.String(l.Mode),
		AttrOutcome.String(l.Outcome), AttrAck.Bool(l.Ack))
}

// Delivery counts one handled delivery.
func (in *Instruments) Delivery(ctx context.Context, l Labels) {
	in.deliveries.Add(ctx, 1, metric.WithAttributeSet(l.set()))
}

// Claim records a claim duration.
func (in *Instruments) Claim(ctx context.Context, d time.Duration, l Labels) {
	in.claimDur.Record(ctx, d.Seconds(), metric.WithAttributeSet(l.set()))
}

// Body records a body duration.
func (in *Instruments) Body(ctx context.Context, d time.Duration, l Labels) {
	in.bodyDur.Record(ctx, d.Seconds(), metric.WithAttributeSet(l.set()))
}

// Prepared is a Labels set built once (Labels.Prepare): recording through it
// allocates nothing, where each call that takes Labels builds the attribute
// set anew. An adapter prepares one per mode and outcome.
type Prepared struct {
	add []metric.AddOption
	rec []metric.RecordOption
}

// Prepare builds l's attribute set once.
func (l Labels) Prepare() Prepared {
	opt := metric.WithAttributeSet(l.set())
	return Prepared{add: []metric.AddOption{opt}, rec: []metric.RecordOption{opt}}
}

// DeliveryPrepared counts one handled delivery.
func (in *Instruments) DeliveryPrepared(ctx context.Context, p Prepared) {
	in.deliveries.Add(ctx, 1, p.add...)
}

// ClaimPrepared records a claim duration.
func (in *Instruments) ClaimPrepared(ctx context.Context, d time.Duration, p Prepared) {
	in.claimDur.Record(ctx, d.Seconds(), p.rec...)
}

// BodyPrepared records a body duration.
func (in *Instruments) BodyPrepared(ctx context.Context, d time.Duration, p Prepared) {
	in.bodyDur.Record(ctx, d.Seconds(), p.rec...)
}
