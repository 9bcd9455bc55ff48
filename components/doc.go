// Package components holds the Pulumi component resources (pulumi-gcp Go SDK
// v8) that provision an oncegate consumer on Google Cloud and hand the very
// same sizing numbers to the runtime through the Cloud Run service's
// environment, so invariants 1–3 of the sizing package hold by construction.
//
// Consumer provisions the whole consumer from one sizing.Plan. Its pieces are
// usable on their own in existing infrastructure:
//
//   - ProjectServices enables the APIs a consumer needs.
//   - PushSubscription creates a push subscription that always has a retry
//     policy, a dead-letter topic with a long-retention pull subscription, a
//     dedicated push service account whose OIDC token targets the service,
//     and the IAM that makes dead-lettering and OIDC push work.
//   - TTLPolicy turns on the Firestore TTL policy on expires_at for the
//     gateway's kind, optionally creating the database in Datastore mode.
//   - Service runs the gateway on Cloud Run v2 with a runtime service account,
//     the request timeout of the plan and the configuration contract of
//     docs/design.md in its environment; only the push account may invoke it.
//
// Sizing inputs are plain Go values (sizing.Plan), not Pulumi inputs, so an
// unsafe plan fails at `pulumi preview` with the sizing package's sentence
// before any resource is registered.
package components
