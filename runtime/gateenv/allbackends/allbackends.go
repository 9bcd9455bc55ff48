// Package allbackends links every backend of this module into gateenv:
// memory (always linked), sql, redis and datastore. The reference worker
// (examples/cloudrun) and the oncegate CLI import it so that ONCEGATE_BACKEND
// may name any of them:
//
//	import _ "github.com/oncegate/oncegate/runtime/gateenv/allbackends"
//
// A program that runs one backend imports only that one's package instead
// (gateenv/sqlenv, gateenv/redisenv or gateenv/datastoreenv) and links only
// its client.
package allbackends

import (
	_ "github.com/oncegate/oncegate/runtime/gateenv/datastoreenv" // ONCEGATE_BACKEND=datastore
	_ "github.com/oncegate/oncegate/runtime/gateenv/redisenv"     // ONCEGATE_BACKEND=redis
	_ "github.com/oncegate/oncegate/runtime/gateenv/sqlenv"       // ONCEGATE_BACKEND=sql
)
