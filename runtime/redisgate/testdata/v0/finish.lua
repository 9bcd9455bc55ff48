-- finish (complete or fail): ARGV = fence, ttl_ms, state ('done' or 'failed'),
-- result ('' for none). No lease guard: ownership is the fence, not the clock.
-- Returns 1 when committed, 0 when the fence is stale or the record not claimed.
local k = KEYS[1]
local h = redis.call('HMGET', k, 'state', 'fence')
if not held(h[1], h[2]) then
  return 0
end
local now = now_ms()
local expires = now + tonumber(ARGV[2])
if ARGV[4] ~= '' then
  redis.call('HSET', k, 'state', ARGV[3], 'done_at', int(now), 'expires_at', int(expires), 'result', ARGV[4])
else
  redis.call('HSET', k, 'state', ARGV[3], 'done_at', int(now), 'expires_at', int(expires))
end
redis.call('PEXPIREAT', k, int(expires))
return 1
