// Package idemhttp is Idempotency-Key middleware for plain net/http APIs, after
// the IETF httpapi draft "The Idempotency-Key HTTP Header Field"
// (draft-ietf-httpapi-idempotency-key-header). A request carrying the header
// runs its handler at most once per key (and principal); a retry replays the
// stored status, selected headers and body, marked with "Idempotent-Replayed:
// true".
//
// Answers the middleware gives itself, as the draft recommends: a missing key
// on a route that requires one is 400; a request whose key is still being
// processed is 409; the same key with a different request (method, path, query
// or body) is 422. Only final answers are stored: a handler answer of 5xx, 408
// Request Timeout, 425 Too Early or 429 Too Many Requests is sent but not
// stored, so the client's retry runs the handler again; every other answer
// (2xx, 3xx, the other 4xx) is final for the key's ttl and replayed.
package idemhttp
