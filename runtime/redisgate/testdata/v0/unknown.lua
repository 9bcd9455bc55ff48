-- mark unknown: ARGV = fence. The record loses expires_at and its TTL (PERSIST):
-- it must survive until resolved. Returns 1 when marked, 0 when stale.
local k = KEYS[1]
local h = redis.call('HMGET', k, 'state', 'fence')
if not held(h[1], h[2]) then
  return 0
end
redis.call('HSET', k, 'state', 'unknown')
redis.call('HDEL', k, 'expires_at')
redis.call('PERSIST', k)
return 1
