package push_test

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/push"
	"github.com/oncegate/oncegate/runtime/telemetry"
)

func TestTelemetry(t *testing.T) {
	e := newEnv(t, nil, nil)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	h, err := push.NewHandler(e.gate, func(ctx context.Context, m *push.Message, _ gate.Claim) error {
		if m.MessageID == "bad" {
			return errors.New("boom")
		}
		return nil
	}, &push.Options{AdapterOptions: push.AdapterOptions{MeterProvider: mp, TracerProvider: tp}})
	if err != nil {
		t.Fatal(err)
	}
	post(t, h, envelope("m1", []byte("x"), 2), nil) // ran
	post(t, h, envelope("m1", []byte("x"), 3), nil) // duplicate
	post(t, h, envelope("bad", nil, 1), nil)        // body-failed
	post(t, h, []byte("{"), nil)                    // malformed

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	var claims, bodies uint64
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != telemetry.ScopeName {
			t.Errorf("scope %q", sm.Scope.Name)
		}
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					o, _ := p.Attributes.Value(telemetry.AttrOutcome)
					a, _ := p.Attributes.Value(telemetry.AttrAdapter)
					if a.AsString() != "push" {
						t.Errorf("adapter attribute %q", a.AsString())
					}
					counts[o.AsString()] += p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					switch m.Name {
					case telemetry.MetricClaimDuration:
						claims += p.Count
					case telemetry.MetricBodyDuration:
						bodies += p.Count
					}
				}
				if m.Unit != "s" {
					t.Errorf("%s unit %q", m.Name, m.Unit)
				}
			}
		}
	}
	want := map[string]int64{"ran": 1, "duplicate": 1, "body-failed": 1, "malformed": 1}
	for k, v := range want {
		if counts[k] != v {
			t.Errorf("deliveries{outcome=%s} = %d, want %d (all: %v)", k, counts[k], v, counts)
		}
	}
	if claims != 3 || bodies != 2 {
		t.Errorf("claim durations %d (want 3), body durations %d (want 2)", claims, bodies)
	}

	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range spans.Ended() {
		byName[s.Name()] = append(byName[s.Name()], s)
	}
	if len(byName["oncegate.push process"]) != 3 || len(byName["oncegate.claim"]) != 3 || len(byName["oncegate.body"]) != 2 {
		t.Fatalf("spans: %v", byName)
	}
	first := byName["oncegate.push process"][0]
	attrs := map[attribute.Key]attribute.Value{}
	for _, kv := range first.Attributes() {
		attrs[kv.Key] = kv.Value
	}
	if attrs[telemetry.AttrKey].AsString() != "orders:m1" || attrs[telemetry.AttrFence].AsInt64() != 1 ||
		attrs[telemetry.AttrOutcome].AsString() != "ran" || attrs[telemetry.AttrDeliveryAttempt].AsInt64() != 2 {
		t.Errorf("process span attributes %v", attrs)
	}
	body := byName["oncegate.body"][0]
	claim := byName["oncegate.claim"][0]
	if body.Parent().SpanID() != first.SpanContext().SpanID() || claim.Parent().SpanID() != first.SpanContext().SpanID() {
		t.Error("claim and body spans are not children of the process span")
	}
	if claim.EndTime().After(body.StartTime()) {
		t.Error("claim span ends after the body started")
	}
}
