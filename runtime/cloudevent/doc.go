// Package cloudevent is oncegate's adapter for CloudEvents over HTTP, as
// Eventarc delivers them to Cloud Run and to Cloud Functions (gen2): an
// http.Handler that accepts binary and structured content modes (parsed with the
// CloudEvents Go SDK), derives an idempotency key, runs the handler function
// through a gate and answers by gate's ack table (503 for in-progress, 204 for
// duplicates, …), so Eventarc's underlying Pub/Sub subscription acks or
// retries exactly as a plain push subscription would.
//
// An event of type google.cloud.pubsub.topic.v1.messagePublished carries a
// Pub/Sub message (MessagePublishedData); its data is parsed into Event.Message
// and the default key is the message id, the same "<namespace>:<messageId>" key
// the push adapter uses, so one message is handled once whichever way it
// arrives. Any other event type is keyed by its CloudEvents source and id, which
// the CloudEvents specification requires to be unique per event.
//
// The handler is built on push.Guard and takes the same push.AdapterOptions
// (embedded in Options; gateenv's Config.AdapterOptions fills them): OIDC
// verification, size limits, the disable switch, logging and telemetry behave
// as in package push.
//
// Under functions-framework-go, register the handler as an HTTP function
// (functions.HTTP), not a CloudEvent function: a CloudEvent function can only
// return an error, which the framework answers with 500, so an in-progress
// duplicate could not get its 503 nor a duplicate its 204.
package cloudevent
