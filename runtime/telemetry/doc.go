// Package telemetry holds the OpenTelemetry instruments oncegate's HTTP adapters
// (runtime/push, runtime/cloudevent) share: a delivery counter by outcome, claim
// and body duration histograms, and a tracer. It uses the otel API only; with no
// SDK installed every instrument is a no-op, so no exporter is required. Install a
// MeterProvider and TracerProvider (globally with otel.SetMeterProvider and
// otel.SetTracerProvider, or per handler through Options) to export them.
//
// Instrument names, units and attributes are constants of this package so
// dashboards and tests refer to one spelling. Idempotency keys are high-cardinality
// and never become metric attributes; they appear only on spans and log lines.
package telemetry
