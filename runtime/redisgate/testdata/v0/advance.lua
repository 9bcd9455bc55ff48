-- advance fence: ARGV = at_least (at most MAX_FENCE, checked by the caller),
-- ttl_ms. Sets fence = max(fence, at_least), never lowering it, and returns the
-- fence now stored. An absent key gets a lapsed claim (lease_expiry = now) with
-- expires_at = now + ttl.
local k = KEYS[1]
local at = tonumber(ARGV[1])
if redis.call('EXISTS', k) == 1 then
  local f = redis.call('HGET', k, 'fence')
  if not f or not tonumber(f) or at > tonumber(f) then -- a missing fence counts as lower
    redis.call('HSET', k, 'fence', int(at))
    return int(at)
  end
  return f
end
if at < 0 then
  at = 0
end
local now = now_ms()
local expires = now + tonumber(ARGV[2])
redis.call('HSET', k, 'state', 'claimed', 'fence', int(at), 'lease_expiry', int(now), 'expires_at', int(expires))
redis.call('PEXPIREAT', k, int(expires))
return int(at)
