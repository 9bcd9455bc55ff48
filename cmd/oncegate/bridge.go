package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"github.com/spf13/cobra"

	"github.com/oncegate/oncegate/internal/localpubsub"
	"github.com/oncegate/oncegate/internal/pushbridge"
	"github.com/oncegate/oncegate/sizing"
)

func newBridgeCmd() *cobra.Command {
	var o pushbridge.Options
	var project, createTopic string
	var dialTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "bridge",
		Short: "Pull from a subscription and POST real push requests to an endpoint",
		Long: `bridge turns a pull subscription into push deliveries, for running the worker
locally against the Pub/Sub emulator (set PUBSUB_EMULATOR_HOST) or a real
subscription. It acks on 102/200/201/202/204 and otherwise nacks with the
subscription's retry policy (the redelivery waits the backoff), includes
deliveryAttempt when the subscription has a dead-letter policy, and drains on
SIGINT/SIGTERM.

With PUBSUB_EMULATOR_HOST set it first checks that the emulator answers within
--dial-timeout and says how to start it when it does not. --create-topic T creates,
on the emulator, topic T, the subscription (ack deadline, retry policy and
dead-letter policy from the ONCEGATE_* plan in the environment, as the components
size them), the dead-letter topic T-dlq and its pull subscription T-dlq.`,
		Example: `  # --create-topic sizes the subscription from the same ONCEGATE_* plan as the worker
  PUBSUB_EMULATOR_HOST=localhost:8085 ONCEGATE_LEASE=60s ONCEGATE_HEARTBEAT=20s \
    ONCEGATE_WORK_DEADLINE=60s oncegate bridge --project demo \
    --subscription orders-push --endpoint http://localhost:8080/ --create-topic orders`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !strings.HasPrefix(o.Subscription, "projects/") {
				if project == "" {
					return fmt.Errorf("--project: required when --subscription is not a full name (projects/P/subscriptions/S)")
				}
				o.Subscription = "projects/" + project + "/subscriptions/" + o.Subscription
			}
			if project == "" {
				project = strings.Split(o.Subscription, "/")[1]
			}
			o.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
			o.OnDelivery = func(d pushbridge.Delivery) {
				o.Logger.Info("push", "message_id", d.MessageID, "attempt", d.Attempt, "status", d.Status, "acked", d.Acked)
			}
			var client *pubsub.Client
			if host := os.Getenv("PUBSUB_EMULATOR_HOST"); host != "" {
				ps, err := localpubsub.Connect(cmd.Context(), host, project, dialTimeout)
				if err != nil {
					return err
				}
				defer ps.Close()
				client = ps.Client
				if createTopic != "" {
					plan, err := sizing.FromEnv(os.Getenv)
					if err != nil {
						return fmt.Errorf("--create-topic sizes the subscription from the ONCEGATE_* plan: %w", err)
					}
					p := "projects/" + project
					t := localpubsub.Topology{Topic: p + "/topics/" + createTopic, Subscription: o.Subscription,
						DeadLetterTopic: p + "/topics/" + createTopic + "-dlq", DeadLetterSubscription: p + "/subscriptions/" + createTopic + "-dlq"}
					if err := ps.Create(cmd.Context(), t, plan); err != nil {
						return err
					}
					fmt.Fprintf(cmd.ErrOrStderr(), "created %s, %s, %s and %s\n", t.Topic, t.Subscription, t.DeadLetterTopic, t.DeadLetterSubscription)
				}
			} else {
				if createTopic != "" {
					return fmt.Errorf("--create-topic: only on the emulator (set PUBSUB_EMULATOR_HOST); deploy real topics with the components (docs/deploy.md)")
				}
				c, err := pubsub.NewClient(cmd.Context(), project)
				if err != nil {
					return fmt.Errorf("pubsub client: %w", err)
				}
				defer c.Close()
				client = c
			}
			b, err := pushbridge.New(cmd.Context(), client.SubscriptionAdminClient, o)
			if err != nil {
				return err
			}
			return b.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&project, "project", os.Getenv("GOOGLE_CLOUD_PROJECT"), "project id (default $GOOGLE_CLOUD_PROJECT)")
	f.StringVar(&o.Subscription, "subscription", "", "subscription name or projects/P/subscriptions/S (required)")
	f.StringVar(&o.Endpoint, "endpoint", "http://localhost:8080/", "push endpoint URL")
	f.IntVar(&o.Concurrency, "concurrency", 8, "deliveries in flight")
	f.DurationVar(&dialTimeout, "dial-timeout", 10*time.Second, "how long to wait for the emulator to answer")
	f.StringVar(&createTopic, "create-topic", "", "on the emulator: create this topic, the subscription and the dead-letter topic and subscription first")
	_ = cmd.MarkFlagRequired("subscription")
	return cmd
}
