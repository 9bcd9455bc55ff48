package redisgate

import (
	_ "embed"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/oncegate/oncegate/runtime/gate"
)

// The Lua sources, one per operation, each run after the shared prelude.
var (
	//go:embed lua/prelude.lua
	preludeSrc string
	//go:embed lua/claim.lua
	claimSrc string
	//go:embed lua/finish.lua
	finishSrc string
	//go:embed lua/release.lua
	releaseSrc string
	//go:embed lua/renew.lua
	renewSrc string
	//go:embed lua/unknown.lua
	unknownSrc string
	//go:embed lua/advance.lua
	advanceSrc string
	//go:embed lua/inspect.lua
	inspectSrc string
	//go:embed lua/resolve.lua
	resolveSrc string
)

// script builds one operation's script: the MAX_FENCE constant, the prelude, then
// the operation. redis.Script.Run sends EVALSHA with the source's SHA-1 and, on a
// NOSCRIPT answer (empty script cache after a restart, a failover or SCRIPT
// FLUSH), EVAL with the whole source, which caches it again.
func script(src string) *redis.Script {
	return redis.NewScript(fmt.Sprintf("local MAX_FENCE = %d\n%s\n%s", gate.MaxFence, preludeSrc, src))
}

var (
	claimScript   = script(claimSrc)
	finishScript  = script(finishSrc)
	releaseScript = script(releaseSrc)
	renewScript   = script(renewSrc)
	unknownScript = script(unknownSrc)
	advanceScript = script(advanceSrc)
	inspectScript = script(inspectSrc)
	resolveScript = script(resolveSrc)
)
