package stores

import (
	"fmt"
	"strings"

	"github.com/oncegate/oncegate/bench/roundtrip"
)

// Kind names a backend.
type Kind string

// The backends, in the order reports list them.
const (
	Memory    Kind = "memory"
	SQLite    Kind = "sqlite"
	Postgres  Kind = "postgres"
	MySQL     Kind = "mysql"
	Redis     Kind = "redis"
	Datastore Kind = "datastore"
)

// Kinds lists every backend.
var Kinds = []Kind{Memory, SQLite, Postgres, MySQL, Redis, Datastore}

// ParseKind returns the Kind named s, or an error listing the names.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds {
		if string(k) == s {
			return k, nil
		}
	}
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return "", fmt.Errorf("backend %q: want one of %s", s, strings.Join(names, ", "))
}

// Label is the backend's name in reports.
func (k Kind) Label() string {
	switch k {
	case Memory:
		return "memory"
	case SQLite:
		return "SQLite"
	case Postgres:
		return "PostgreSQL"
	case MySQL:
		return "MariaDB"
	case Redis:
		return "Redis"
	case Datastore:
		return "Datastore fake"
	}
	return string(k)
}

// Networked reports whether the backend's store is reached over a network
// connection (so its round trips can be counted on the wire).
func (k Kind) Networked() bool { return k == Postgres || k == MySQL || k == Redis || k == Datastore }

// Trips returns the store round trips in c, a Store's counter or one a request
// carried (roundtrip.WithCounter): SQL statements and transaction verbs, Redis
// commands and pipelines, or Datastore RPCs. Memory makes none.
func (k Kind) Trips(c *roundtrip.Counter) int64 {
	switch k {
	case SQLite, Postgres, MySQL:
		return c.Sum(roundtrip.SQLTrips...)
	case Redis:
		return c.Sum(roundtrip.RedisCommands, roundtrip.RedisPipelines)
	case Datastore:
		return c.Get(roundtrip.GRPCCalls)
	}
	return 0
}
