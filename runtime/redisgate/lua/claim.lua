-- claim: ARGV = token, owner, lease_ms, ttl_ms, fingerprint ('' for none).
-- Returns {status, fields}: status 1 won, 2 held by other, 3 done, 4 failed,
-- 5 unknown, -1 key reuse, -2 fence exhausted; fields is the record as a flat
-- field/value list: as found, except for a new claim, where it holds only the
-- fields the caller does not know (fence, lease_expiry, expires_at, fingerprint).
local k = KEYS[1]
local token, owner, fp = ARGV[1], ARGV[2], ARGV[5]
local now = now_ms()
local h = redis.call('HMGET', k, 'state', 'fence', 'lease_expiry', 'expires_at', 'claim_token', 'fingerprint')
local state, fence, live = h[1], 1, false
if state then
  fence = tonumber(h[2]) + 1
  -- Expiry is judged here, on the server clock: a present but expired record is
  -- reclaimed with fence+1. An unknown record never expires.
  live = state == 'unknown' or not h[4] or now < tonumber(h[4])
end
if live then
  if fp ~= '' and h[6] and h[6] ~= fp then
    return {-1, redis.call('HGETALL', k)}
  end
  if state == 'done' then
    return {3, redis.call('HGETALL', k)}
  elseif state == 'failed' then
    return {4, redis.call('HGETALL', k)}
  elseif state == 'unknown' then
    return {5, redis.call('HGETALL', k)}
  end
  if token ~= '' and h[5] == token then
    return {1, redis.call('HGETALL', k)} -- a retried claim re-affirms itself
  end
  if now < tonumber(h[3]) then
    return {2, redis.call('HGETALL', k)}
  end
end
if fence > MAX_FENCE then
  return {-2, {}}
end
if fp == '' and live and h[6] then
  fp = h[6] -- a released or lapsed claim keeps its payload's fingerprint
end
local lease_ms = now + tonumber(ARGV[3])
local lease, expires = int(lease_ms), int(lease_ms + tonumber(ARGV[4]))
fence = int(fence)
if state then
  redis.call('DEL', k) -- a new claim starts a new record: no done_at, no result
end
if fp ~= '' then
  redis.call('HSET', k, 'state', 'claimed', 'fence', fence, 'lease_expiry', lease,
    'expires_at', expires, 'claim_token', token, 'owner', owner, 'fingerprint', fp)
else
  redis.call('HSET', k, 'state', 'claimed', 'fence', fence, 'lease_expiry', lease,
    'expires_at', expires, 'claim_token', token, 'owner', owner)
end
redis.call('PEXPIREAT', k, expires)
-- The caller knows the rest of the record: state claimed, its token and owner.
return {1, {'fence', fence, 'lease_expiry', lease, 'expires_at', expires, 'fingerprint', fp}}
