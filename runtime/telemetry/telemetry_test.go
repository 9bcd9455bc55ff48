package telemetry_test

import (
	"context"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/oncegate/oncegate/runtime/telemetry"
)

// TestNoSDK checks the instruments work with the global no-op providers.
func TestNoSDK(t *testing.T) {
	in, err := telemetry.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, span := in.Tracer.Start(context.Background(), "x")
	in.Delivery(ctx, telemetry.Labels{Outcome: "ran"})
	in.Claim(ctx, time.Millisecond, telemetry.Labels{})
	in.Body(ctx, time.Millisecond, telemetry.Labels{})
	span.End()
}

func TestDurationsInSeconds(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	in, err := telemetry.New(&telemetry.Options{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
	if err != nil {
		t.Fatal(err)
	}
	l := telemetry.Labels{Adapter: "push", Mode: "lock", Outcome: "ran", Ack: true}
	in.Claim(context.Background(), 250*time.Millisecond, l)
	in.Body(context.Background(), 2*time.Second, l)
	p := l.Prepare() // the same series as l
	in.ClaimPrepared(context.Background(), 250*time.Millisecond, p)
	in.BodyPrepared(context.Background(), 2*time.Second, p)
	in.DeliveryPrepared(context.Background(), p)
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	sums := map[string]float64{}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		h, isHist := m.Data.(metricdata.Histogram[float64])
		if !isHist {
			continue
		}
		if len(h.DataPoints) != 1 {
			t.Errorf("%s: %d series, want 1 (Prepare must give Labels' set)", m.Name, len(h.DataPoints))
		}
		for _, p := range h.DataPoints {
			sums[m.Name] += p.Sum
			if ack, _ := p.Attributes.Value(telemetry.AttrAck); !ack.AsBool() {
				t.Errorf("%s: ack attribute missing", m.Name)
			}
		}
	}
	if sums[telemetry.MetricClaimDuration] != 0.5 || sums[telemetry.MetricBodyDuration] != 4 {
		t.Errorf("sums %v", sums)
	}
}
