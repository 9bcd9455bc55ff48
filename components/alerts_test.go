package components

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

func alertsArgs() *AlertsArgs {
	return &AlertsArgs{
		Project:                    pulumi.String(testProject),
		SubscriptionName:           pulumi.String("orders-sub"),
		DeadLetterSubscriptionName: pulumi.String("orders-dlq-sub"),
		ServiceName:                pulumi.String("orders-svc"),
		Horizon:                    2*time.Hour + 58*time.Minute + 42*time.Second,
		NotificationChannels:       pulumi.StringArray{pulumi.String("projects/acme-prod/notificationChannels/7")},
	}
}

func newAlerts(args *AlertsArgs) (*mocks, error) {
	return run(func(ctx *pulumi.Context) error {
		_, err := NewAlerts(ctx, "orders", args)
		return err
	})
}

func TestAlerts(t *testing.T) {
	m, err := newAlerts(alertsArgs())
	if err != nil {
		t.Fatal(err)
	}
	cond := func(name string) rec {
		r := m.one(t, "gcp:monitoring/alertPolicy:AlertPolicy", name)
		wantStr(t, r, "notificationChannels.0", "projects/acme-prod/notificationChannels/7")
		wantStr(t, r, "conditions.0.conditionThreshold.comparison", "COMPARISON_GT")
		return r
	}
	dlq := cond("orders-dead-letters")
	wantStr(t, dlq, "conditions.0.conditionThreshold.filter",
		`resource.type = "pubsub_subscription" AND resource.labels.subscription_id = "orders-dlq-sub" AND metric.type = "pubsub.googleapis.com/subscription/num_undelivered_messages"`)
	if v := get(t, dlq, "conditions.0.conditionThreshold.thresholdValue").NumberValue(); v != 0 {
		t.Errorf("dead-letter threshold = %v, want 0 (any message)", v)
	}
	old := cond("orders-oldest-unacked")
	wantStr(t, old, "conditions.0.conditionThreshold.filter",
		`resource.type = "pubsub_subscription" AND resource.labels.subscription_id = "orders-sub" AND metric.type = "pubsub.googleapis.com/subscription/oldest_unacked_message_age"`)
	if v := get(t, old, "conditions.0.conditionThreshold.thresholdValue").NumberValue(); v != 10722 {
		t.Errorf("oldest unacked threshold = %v s, want the horizon, 10722 s", v)
	}
	for suffix, match := range map[string]string{
		"unknown":    `jsonPayload.msg = "oncegate: reconcile key: outcome unknown"`,
		"fenced-out": `jsonPayload.msg =~ "^oncegate: fenced out"`,
	} {
		metric := m.one(t, "gcp:logging/metric:Metric", "orders-"+suffix+"-log")
		wantStr(t, metric, "filter", `resource.type = "cloud_run_revision" AND resource.labels.service_name = "orders-svc" AND `+match)
		wantStr(t, metric, "metricDescriptor.metricKind", "DELTA")
		wantStr(t, metric, "metricDescriptor.valueType", "INT64")
		p := cond("orders-" + suffix)
		wantStr(t, p, "conditions.0.conditionThreshold.filter",
			`resource.type = "cloud_run_revision" AND metric.type = "logging.googleapis.com/user/orders-`+suffix+`-log"`)
	}
	if n := len(m.res); n != 7 {
		t.Errorf("%d resources, want 7 (component, 4 policies, 2 metrics)", n)
	}
	checkFamily(t, m, "orders")

	// Without a service name there are no log lines to count.
	args := alertsArgs()
	args.ServiceName = nil
	m, err = newAlerts(args)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.of("gcp:logging/metric:Metric")); n != 0 || len(m.of("gcp:monitoring/alertPolicy:AlertPolicy")) != 2 {
		t.Errorf("%d metrics and %d policies without a service", n, len(m.of("gcp:monitoring/alertPolicy:AlertPolicy")))
	}
}

// TestAlertLogLinesExist keeps the log-based metrics in step with the runtime:
// each message they match is one runtime/gate logs.
func TestAlertLogLinesExist(t *testing.T) {
	b, err := os.ReadFile("../runtime/gate/gate.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range []string{`"` + logOutcomeUnknown + `"`, `"` + logFencedOut + `: `} {
		if !strings.Contains(string(b), msg) {
			t.Errorf("runtime/gate/gate.go no longer logs %s; update the log-based metrics", msg)
		}
	}
}

func TestAlertsRefuse(t *testing.T) {
	for name, edit := range map[string]func(*AlertsArgs){
		"no subscription": func(a *AlertsArgs) { a.SubscriptionName = nil },
		"no horizon":      func(a *AlertsArgs) { a.Horizon = 0 },
		"nil args":        nil,
	} {
		args := alertsArgs()
		if edit != nil {
			edit(args)
		} else {
			args = nil
		}
		m, err := newAlerts(args)
		if err == nil || len(m.res) != 0 {
			t.Errorf("%s: err %v, %d resources", name, err, len(m.res))
		}
	}
}
