package main

import (
	"fmt"

	"github.com/spf13/cobra"
	firestore "google.golang.org/api/firestore/v1"
	"google.golang.org/api/option"

	"github.com/oncegate/oncegate/internal/ttladmin"
)

// newTTLCmd is `oncegate ttl enable|check`: the Firestore TTL policy on
// expires_at that the Pulumi components cannot create on a Datastore-mode
// database (see internal/ttladmin for why). The consumer component prints both
// commands as outputs; docs/deploy.md makes them a deployment step.
func newTTLCmd() *cobra.Command {
	var p ttladmin.Policy
	var endpoint string
	cmd := &cobra.Command{
		Use:   "ttl",
		Short: "Enable or check the Firestore TTL policy on the records' expires_at (Datastore mode)",
		Long: "Enable or check the Firestore TTL policy on expires_at of the gateway's kind.\n\n" +
			"enable sends the Admin API's UpdateField with update mask ttlConfig and leaves the field's\n" +
			"indexing alone, which a Datastore-mode database requires. check exits non-zero unless the\n" +
			"policy is ACTIVE. Credentials: Application Default Credentials (roles/datastore.indexAdmin).",
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&p.Project, "project", "", "project ID (required)")
	pf.StringVar(&p.Database, "database", ttladmin.DefaultDatabase, "database ID")
	pf.StringVar(&p.Kind, "kind", "OncegateRecord", "Datastore kind of the gateway's records (ONCEGATE_DATASTORE_KIND)")
	pf.StringVar(&endpoint, "endpoint", "", "Admin API endpoint (default: Google's; for tests)")
	// withService checks the flags, then runs fn with an Admin API client.
	withService := func(fn func(cmd *cobra.Command, svc *firestore.Service) error) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, _ []string) error {
			if err := p.Validate(); err != nil {
				return err
			}
			var opts []option.ClientOption
			if endpoint != "" {
				opts = append(opts, option.WithEndpoint(endpoint), option.WithoutAuthentication())
			}
			svc, err := firestore.NewService(cmd.Context(), opts...)
			if err != nil {
				return fmt.Errorf("firestore admin client: %w", err)
			}
			return fn(cmd, svc)
		}
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "enable",
		Short: "Turn the TTL policy on (UpdateField, update mask ttlConfig)",
		Args:  cobra.NoArgs,
		RunE: withService(func(cmd *cobra.Command, svc *firestore.Service) error {
			op, err := ttladmin.Enable(cmd.Context(), svc, p)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ttl policy requested on %s\noperation %s\n", p.Name(), op)
			fmt.Fprintf(cmd.OutOrStdout(), "run `oncegate ttl check --project %s --database '%s' --kind %s` until it reports ACTIVE\n", p.Project, dbOrDefault(p.Database), p.Kind)
			return nil
		}),
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "check",
		Short: "Report the TTL policy's state; exit non-zero unless ACTIVE",
		Args:  cobra.NoArgs,
		RunE: withService(func(cmd *cobra.Command, svc *firestore.Service) error {
			state, err := ttladmin.Check(cmd.Context(), svc, p)
			if state != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "ttl policy on %s: %s\n", p.Name(), state)
			}
			return err
		}),
	})
	return cmd
}

func dbOrDefault(db string) string {
	if db == "" {
		return ttladmin.DefaultDatabase
	}
	return db
}
