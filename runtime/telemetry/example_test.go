package telemetry_test

import (
	"context"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/oncegate/oncegate/runtime/telemetry"
)

// Count a delivery and read it back through the SDK's manual reader.
func Example() {
	reader := sdkmetric.NewManualReader()
	in, err := telemetry.New(&telemetry.Options{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	in.Delivery(ctx, telemetry.Labels{Adapter: "push", Mode: "lock", Outcome: "duplicate", Ack: true})

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(ctx, &rm)
	m := rm.ScopeMetrics[0].Metrics[0]
	p := m.Data.(metricdata.Sum[int64]).DataPoints[0]
	outcome, _ := p.Attributes.Value(telemetry.AttrOutcome)
	fmt.Println(m.Name, outcome.AsString(), p.Value)
	// Output: oncegate.deliveries duplicate 1
}
