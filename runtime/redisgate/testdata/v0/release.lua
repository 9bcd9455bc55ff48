-- release: ARGV = fence. lease_expiry = now, fence+1, claim token cleared, so the
-- key is claimable at once and the released claim's retry cannot re-affirm it;
-- expires_at (and the key's TTL) stay. Returns 1 when released, 0 when stale,
-- -2 when fence+1 would pass MAX_FENCE.
local k = KEYS[1]
local h = redis.call('HMGET', k, 'state', 'fence')
if not held(h[1], h[2]) then
  return 0
end
if tonumber(h[2]) >= MAX_FENCE then
  return -2
end
redis.call('HSET', k, 'fence', int(tonumber(h[2]) + 1), 'lease_expiry', int(now_ms()))
redis.call('HDEL', k, 'claim_token')
return 1
