package components

import (
	"fmt"
	"time"

	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/logging"
	"github.com/pulumi/pulumi-gcp/sdk/v8/go/gcp/monitoring"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// AlertsArgs configure Alerts. Project, SubscriptionName,
// DeadLetterSubscriptionName and a positive Horizon are required.
type AlertsArgs struct {
	// Project is the project ID. Required.
	Project pulumi.StringInput
	// SubscriptionName is the push subscription's name (its ID within the
	// project). Required.
	SubscriptionName pulumi.StringInput
	// DeadLetterSubscriptionName is the dead-letter pull subscription's name.
	// Required.
	DeadLetterSubscriptionName pulumi.StringInput
	// ServiceName is the Cloud Run service running the gateway. When set,
	// log-based metrics count the runtime's outcome-unknown and fenced-out
	// lines and alert on any. Nil skips them.
	ServiceName pulumi.StringInput
	// Horizon is how old the oldest unacknowledged message on the push
	// subscription may grow before an alert: past it, Pub/Sub's redelivery
	// under the plan cannot explain the age. Required.
	Horizon time.Duration
	// NotificationChannels receive the alerts
	// ("projects/<p>/notificationChannels/<id>"). Empty leaves the policies
	// visible in Cloud Monitoring only.
	NotificationChannels pulumi.StringArrayInput
	// DependsOn makes every child wait for these resources.
	DependsOn []pulumi.Resource
}

// The runtime's log lines the log-based metrics count: runtime/gate logs
// exactly these messages (slog, JSON on Cloud Run, so jsonPayload.msg).
const (
	logOutcomeUnknown = "oncegate: reconcile key: outcome unknown"
	logFencedOut      = "oncegate: fenced out"
)

// Alerts are the Cloud Monitoring alert policies of a consumer: messages on
// the dead-letter subscription (each needs an operator), the push
// subscription's oldest unacknowledged message older than the plan's
// redelivery horizon, and — through log-based metrics on the runtime's
// structured logs — any record left with an unknown outcome (it needs
// `oncegate resolve`) and any fenced-out holder (a possible double effect).
// Sources: Pub/Sub metrics subscription/num_undelivered_messages and
// subscription/oldest_unacked_message_age,
// https://cloud.google.com/monitoring/api/metrics_gcp_p_z#gcp-pubsub; Cloud
// Logging "Log-based metrics", https://cloud.google.com/logging/docs/logs-based-metrics
type Alerts struct {
	pulumi.ResourceState

	// PolicyNames are the alert policies' resource names.
	PolicyNames pulumi.StringArrayOutput `pulumi:"policyNames"`
}

// NewAlerts registers an Alerts component named name. It returns an error,
// before registering anything, for a missing required argument.
func NewAlerts(ctx *pulumi.Context, name string, args *AlertsArgs, opts ...pulumi.ResourceOption) (*Alerts, error) {
	if err := args.validate(name); err != nil {
		return nil, err
	}
	c := &Alerts{}
	if err := ctx.RegisterComponentResource(typeAlerts, name, c, opts...); err != nil {
		return nil, err
	}
	parent := pulumi.Composite(pulumi.Parent(c), pulumi.DependsOn(args.DependsOn))
	var names pulumi.StringArray
	policy := func(suffix, display, doc string, filter pulumi.StringInput, threshold float64, aligner string) error {
		p, err := monitoring.NewAlertPolicy(ctx, name+"-"+suffix, &monitoring.AlertPolicyArgs{
			Project:     args.Project,
			DisplayName: pulumi.String(display + " (" + name + ")"),
			Combiner:    pulumi.String("OR"),
			Conditions: monitoring.AlertPolicyConditionArray{&monitoring.AlertPolicyConditionArgs{
				DisplayName: pulumi.String(display),
				ConditionThreshold: &monitoring.AlertPolicyConditionConditionThresholdArgs{
					Filter:         filter,
					Comparison:     pulumi.String("COMPARISON_GT"),
					ThresholdValue: pulumi.Float64(threshold),
					Duration:       pulumi.String("0s"),
					Aggregations: monitoring.AlertPolicyConditionConditionThresholdAggregationArray{
						&monitoring.AlertPolicyConditionConditionThresholdAggregationArgs{
							AlignmentPeriod:  pulumi.String("60s"),
							PerSeriesAligner: pulumi.String(aligner),
						},
					},
				},
			}},
			Documentation:        &monitoring.AlertPolicyDocumentationArgs{Content: pulumi.String(doc), MimeType: pulumi.String("text/markdown")},
			NotificationChannels: args.NotificationChannels,
		}, parent)
		if err != nil {
			return fmt.Errorf("alerts %q: %s: %w", name, suffix, err)
		}
		names = append(names, p.Name)
		return nil
	}
	subFilter := func(metric string, sub pulumi.StringInput) pulumi.StringOutput {
		return pulumi.Sprintf(`resource.type = "pubsub_subscription" AND resource.labels.subscription_id = "%s" AND metric.type = "pubsub.googleapis.com/subscription/%s"`, sub, metric)
	}
	if err := policy("dead-letters", "oncegate: messages were dead-lettered",
		"A message exhausted its delivery attempts. Read it from the dead-letter subscription (docs/runbooks.md) and decide: fix and republish, or drop.",
		subFilter("num_undelivered_messages", args.DeadLetterSubscriptionName), 0, "ALIGN_MAX"); err != nil {
		return nil, err
	}
	if err := policy("oldest-unacked", "oncegate: a message is older than the redelivery horizon",
		fmt.Sprintf("The oldest unacknowledged message on the push subscription is older than %s, the longest the plan lets Pub/Sub keep redelivering it. The dead-letter policy or the push endpoint is not working.", args.Horizon),
		subFilter("oldest_unacked_message_age", args.SubscriptionName), args.Horizon.Seconds(), "ALIGN_MAX"); err != nil {
		return nil, err
	}
	if args.ServiceName != nil {
		for _, l := range []struct{ suffix, display, doc, match string }{
			{"unknown", "oncegate: a record's outcome is unknown",
				"The body ran but its outcome was not recorded. Find the key with `oncegate unresolved` and settle it with `oncegate resolve` (docs/runbooks.md).",
				`jsonPayload.msg = "` + logOutcomeUnknown + `"`},
			{"fenced-out", "oncegate: a holder was fenced out",
				"A holder's lease lapsed while its body ran and another holder took the key: check the sink for a double effect, then lengthen the lease or the heartbeat (docs/runbooks.md).",
				`jsonPayload.msg =~ "^` + logFencedOut + `"`},
		} {
			m, err := logging.NewMetric(ctx, name+"-"+l.suffix+"-log", &logging.MetricArgs{
				Project:     args.Project,
				Description: pulumi.String("oncegate runtime log lines: " + l.display),
				Filter:      pulumi.Sprintf(`resource.type = "cloud_run_revision" AND resource.labels.service_name = "%s" AND %s`, args.ServiceName, l.match),
				MetricDescriptor: &logging.MetricMetricDescriptorArgs{
					MetricKind: pulumi.String("DELTA"),
					ValueType:  pulumi.String("INT64"),
				},
			}, parent)
			if err != nil {
				return nil, fmt.Errorf("alerts %q: %s metric: %w", name, l.suffix, err)
			}
			filter := pulumi.Sprintf(`resource.type = "cloud_run_revision" AND metric.type = "logging.googleapis.com/user/%s"`, m.Name)
			if err := policy(l.suffix, l.display, l.doc, filter, 0, "ALIGN_SUM"); err != nil {
				return nil, err
			}
		}
	}
	c.PolicyNames = names.ToStringArrayOutput()
	if err := ctx.RegisterResourceOutputs(c, pulumi.Map{"policyNames": c.PolicyNames}); err != nil {
		return nil, err
	}
	return c, nil
}

func (args *AlertsArgs) validate(name string) error {
	if args == nil || args.Project == nil || args.SubscriptionName == nil || args.DeadLetterSubscriptionName == nil {
		return fmt.Errorf("alerts %q: Project, SubscriptionName and DeadLetterSubscriptionName are required", name)
	}
	if args.Horizon <= 0 {
		return fmt.Errorf("alerts %q: Horizon must be positive (got %s): the plan's redelivery horizon", name, args.Horizon)
	}
	return nil
}
