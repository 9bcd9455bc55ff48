// Package components holds the Pulumi component resources (pulumi-gcp Go SDK
// v8) that provision an oncegate consumer on Google Cloud and hand the very
// same sizing numbers to the runtime through the Cloud Run service's
// environment, so the sizing package's invariants hold by construction.
//
// Consumer provisions the whole consumer from one sizing.Plan. Its pieces are
// usable on their own in existing infrastructure:
//
//   - ProjectServices enables the APIs a consumer needs.
//   - PushSubscription creates a push subscription that always has a retry
//     policy, a dead-letter topic with a long-retention pull subscription, an
//     OIDC push identity, and the IAM that makes dead-lettering and OIDC push
//     work (the Pub/Sub service agent from projects.ServiceIdentity).
//   - TTLPolicy optionally creates the Firestore database in Datastore mode
//     and gives the `oncegate ttl enable|check` commands that turn on the TTL
//     policy on expires_at, which no Pulumi resource can do in Datastore mode
//     (see TTLPolicy).
//   - Service runs the gateway on Cloud Run v2 with a runtime service
//     account, the request timeout of the plan and the configuration contract
//     of docs/design.md in its environment, for the Datastore, Redis
//     (Memorystore over Direct VPC egress) or SQL (Cloud SQL over its unix
//     socket) backend, credentials through Secret Manager references; only
//     the push account may invoke it.
//   - Alerts creates the Cloud Monitoring alert policies of a consumer.
//
// Sizing inputs are plain Go values (sizing.Plan), not Pulumi inputs, and
// every other input is checked before the first resource is registered, so a
// bad plan or argument fails at `pulumi preview` with one sentence naming the
// field and the fix, and a `pulumi up` never stops half way for it.
package components
