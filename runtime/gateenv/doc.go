// Package gateenv builds the runtime from docs/design.md's configuration contract:
// the environment variables the components set on the Cloud Run service.
//
//	ONCEGATE_BACKEND              memory | sql | redis | datastore (required)
//	ONCEGATE_NAMESPACE            key namespace (required)
//	ONCEGATE_LEASE, ONCEGATE_TTL, ONCEGATE_HEARTBEAT, ONCEGATE_WORK_DEADLINE,
//	ONCEGATE_ACK_DEADLINE, ONCEGATE_MIN_BACKOFF, ONCEGATE_MAX_BACKOFF,
//	ONCEGATE_MAX_DELIVERY_ATTEMPTS, ONCEGATE_SHUTDOWN_GRACE,
//	ONCEGATE_REQUEST_TIMEOUT, ONCEGATE_STORE_TIMEOUT,
//	ONCEGATE_DEAD_LETTER_REPLAY_WINDOW, ONCEGATE_STORE_OUTAGE
//	                              the sizing plan (see sizing.FromEnv)
//	ONCEGATE_SQL_DSN              sql: postgres://…, postgresql://…, mysql://…, sqlite:<path>
//	ONCEGATE_SQL_MAX_CONNS        sql: the pool bound (default sqlgate.DefaultMaxConns)
//	ONCEGATE_REDIS_ADDR           redis: host:port, a comma-separated list (Cluster), or a redis:// URL
//	ONCEGATE_REDIS_ALLOW_EVICTION redis: 1 accepts a server that may evict records (default 0: refused)
//	GOOGLE_CLOUD_PROJECT          datastore: the project
//	ONCEGATE_DATASTORE_DATABASE   datastore: the database id (empty: the default database)
//	ONCEGATE_DATASTORE_KIND       datastore: the entity kind (empty: datastoregate.DefaultKind)
//	ONCEGATE_DATASTORE_MAX_CLOCK_SKEW datastore: the lease margin for clock skew (empty: 1s)
//	ONCEGATE_DISABLED             1 makes the adapters a logged pass-through (handler unit tests only)
//	ONCEGATE_OIDC_AUDIENCE        the push token's audience (required unless ONCEGATE_OIDC_DISABLED=1)
//	ONCEGATE_OIDC_SERVICE_ACCOUNT the push subscription's service account (required likewise)
//	ONCEGATE_OIDC_DISABLED        1 serves pushes without verifying tokens (local runs only)
//
// A pull worker (gateenv/pullenv.New, runtime/pull) reads the same variables but the
// ONCEGATE_OIDC_* ones (it serves no push; its ONCEGATE_STORE_TIMEOUT also
// bounds the wait for an ack result) plus:
//
//	ONCEGATE_PULL_SUBSCRIPTION          the subscription id or full name (required)
//	ONCEGATE_PULL_MAX_EXTENSION         the client's MaxExtension (default 60m; negative: off)
//	ONCEGATE_PULL_MAX_EXTENSION_PERIOD  the client's MaxDurationPerAckExtension (0s: none)
//	ONCEGATE_PULL_MAX_OUTSTANDING       the client's MaxOutstandingMessages (default: the connections)
//	ONCEGATE_PULL_BACKEND_CONNS         the backend client's connections (0: unbounded)
//	ONCEGATE_PULL_DRAIN                 how long running bodies get after SIGTERM
//
// and checks them with sizing.PullPlan's rules instead of the push request's.
//
// New reads them once, re-checks the sizing plan with the sizing package (the
// same validation the components ran at preview time, so a plan that drifted is
// refused: a TTL shorter than the redelivery horizon, invariant 4, or a time
// budget of claim + work + complete + unknown mark past the ack deadline or
// the request timeout, invariant 5, stops start-up naming the variable to
// change and the value to use), opens the backend and returns a Config holding the backend, the
// gate options and the push options they imply. A missing or malformed variable
// is an error naming the variable and the accepted form, on one line.
//
// Push token verification is required by default (ONCEGATE_OIDC_AUDIENCE and
// ONCEGATE_OIDC_SERVICE_ACCOUNT set Config.OIDC). Config.Serve enforces it
// whatever the handler was built with: it serves the handler behind
// push.RequireOIDC, so an unauthenticated push is answered 401 or 403 and runs
// no body. A program that does not use Config.Serve (its own http.Server, a
// Functions Framework entry point) must wire it itself: build every push
// handler with Config.AdapterOptions() (Config.PushOptions() for push; for the
// CloudEvent adapter, cloudevent.Options{AdapterOptions: cfg.AdapterOptions()}),
// or wrap what it serves with
// push.RequireOIDC(cfg.OIDC, h, logger) when cfg.OIDC is not nil. Nothing else
// checks the tokens.
//
// Backends are found in a registry (Options.Backends, default Backends()), so a
// program can add its own and tests of the parsing need no servers. gateenv
// itself links only memory (runtime/memgate, no third-party code); each other
// backend registers itself, from init, when the program imports its package,
// as a database/sql driver does:
//
//	import _ "github.com/oncegate/oncegate/runtime/gateenv/sqlenv"       // sql: pgx, MySQL, SQLite
//	import _ "github.com/oncegate/oncegate/runtime/gateenv/redisenv"     // redis: go-redis
//	import _ "github.com/oncegate/oncegate/runtime/gateenv/datastoreenv" // datastore: the Datastore client
//	import _ "github.com/oncegate/oncegate/runtime/gateenv/allbackends"  // all three
//
// so a binary links only the clients it can use. ONCEGATE_BACKEND naming one
// whose package is not imported stops start-up with one line naming the
// package to import (a *sizing.EnvError for ONCEGATE_BACKEND).
package gateenv
