package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"cloud.google.com/go/pubsub/v2"
	"github.com/spf13/cobra"

	"github.com/oncegate/oncegate/internal/pushbridge"
)

func newBridgeCmd() *cobra.Command {
	var o pushbridge.Options
	var project string
	cmd := &cobra.Command{
		Use:   "bridge",
		Short: "Pull from a subscription and POST real push requests to an endpoint",
		Long: `bridge turns a pull subscription into push deliveries, for running the worker
locally against the Pub/Sub emulator (set PUBSUB_EMULATOR_HOST) or a real
subscription. It acks on 102/200/201/202/204 and otherwise nacks with the
subscription's retry policy (the redelivery waits the backoff), includes
deliveryAttempt when the subscription has a dead-letter policy, and drains on
SIGINT/SIGTERM.`,
		Example: `  PUBSUB_EMULATOR_HOST=localhost:8085 oncegate bridge --project demo \
    --subscription orders-push --endpoint http://localhost:8080/`,
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
			client, err := pubsub.NewClient(cmd.Context(), project)
			if err != nil {
				return fmt.Errorf("pubsub client: %w", err)
			}
			defer client.Close()
			o.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
			o.OnDelivery = func(d pushbridge.Delivery) {
				o.Logger.Info("push", "message_id", d.MessageID, "attempt", d.Attempt, "status", d.Status, "acked", d.Acked)
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
	_ = cmd.MarkFlagRequired("subscription")
	return cmd
}
