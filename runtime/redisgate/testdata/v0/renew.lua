-- renew: ARGV = fence, lease_ms, ttl_ms. lease_expiry = now + lease; expires_at
-- (and the key's TTL) moves to lease_expiry + ttl when that is later. A lapsed
-- but un-reclaimed claim is renewed. Returns 1 when renewed, 0 when stale.
local k = KEYS[1]
local h = redis.call('HMGET', k, 'state', 'fence', 'expires_at')
if not held(h[1], h[2]) then
  return 0
end
local lease = now_ms() + tonumber(ARGV[2])
local expires = lease + tonumber(ARGV[3])
local was = tonumber(h[3])
if not was or expires > was then
  redis.call('HSET', k, 'lease_expiry', int(lease), 'expires_at', int(expires))
  redis.call('PEXPIREAT', k, int(expires))
else
  redis.call('HSET', k, 'lease_expiry', int(lease))
end
return 1
