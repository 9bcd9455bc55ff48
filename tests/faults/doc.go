// Package faults proves oncegate's bad days: injected network faults between the
// gateway and its store, store restarts that lose data, client clock skew, a
// holder process frozen past its lease, and hostile input (keys, configuration,
// OIDC tokens). Everything here is a test; this file only names the package.
//
// Network faults go through Shopify's toxiproxy, used as a Go library in the test
// process, between the gateway and a real Redis or PostgreSQL server: latency
// spikes and a black hole in the middle of a claim and of a complete, connection
// resets, and a store that is down for a few seconds. Deliveries are replayed the
// way Pub/Sub does it (a nack or an answer later than the ack deadline is
// redelivered after a backoff, and some messages are delivered twice at once),
// and every answer is checked against docs/design.md's ack table.
//
// Every scenario checks the same figures: messages published, deliveries tried,
// faults injected, messages processed (accepted by the recording supplier),
// duplicates at the supplier (accepted more than once for one Idempotency-Key;
// must be 0) and losses (a message never acknowledged, or acknowledged without
// reaching the supplier; must be 0). The figures are logged and, with
// ONCEGATE_FAULTS_REPORT=path, written as a Markdown table (see
// docs/RELIABILITY.md, "Faults").
//
// Environment:
//
//   - -short shrinks every loop (a few messages per scenario).
//   - ONCEGATE_CHAOS_SCALE=n multiplies the message counts and fault rounds by n
//     (scripts/chaos sets 10).
//   - ONCEGATE_FAULTS_REPORT=path writes the figures of the run as a Markdown
//     table to path.
//   - The servers come from internal/testenv (ONCEGATE_TEST_REDIS_ADDR,
//     ONCEGATE_TEST_POSTGRES_DSN, ONCEGATE_TEST_MYSQL_DSN, else the local ports,
//     else private servers); tests that restart a server start their own.
//
// Run the suite:
//
//	go test -race -count=1 ./tests/faults/
//
// and the long version with scripts/chaos.
package faults
