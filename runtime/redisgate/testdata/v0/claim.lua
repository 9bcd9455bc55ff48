-- claim: ARGV = token, owner, lease_ms, ttl_ms, fingerprint ('' for none).
-- A new claim returns the string "<fence> <lease_expiry> <expires_at>", followed by
-- " <fingerprint>" when the record has one: the caller knows the rest (state
-- claimed, its token and owner), and a string reply costs the server far less
-- than a table. Every other answer is {status, fields}: status 1 won (a claim
-- re-affirmed by its token), 2 held by other, 3 done, 4 failed, 5 unknown, -1 key
-- reuse, -2 fence exhausted; fields is the record as found, a flat field/value
-- list.
local k = KEYS[1]
local token, owner, fp = ARGV[1], ARGV[2], ARGV[5]
local now = now_ms()
local exists = redis.call('EXISTS', k) == 1
local state, fence, live, h = false, 1, false, nil
if exists then
  h = redis.call('HMGET', k, 'fence', 'lease_expiry', 'expires_at', 'claim_token', 'fingerprint', 'state')
  state = h[6]
  -- A field that is missing or not a number (a partial or foreign write) never
  -- raises: no fence counts as 0, no lease as lapsed, and a hash without a
  -- state is no record at all.
  fence = (tonumber(h[1]) or 0) + 1
  -- Expiry is judged here, on the server clock: a present but expired record is
  -- reclaimed with fence+1. An unknown record never expires.
  local exp = tonumber(h[3])
  live = state and (state == 'unknown' or not exp or now < exp)
end
if live then
  if fp ~= '' and h[5] and h[5] ~= fp then
    return {-1, redis.call('HGETALL', k)}
  end
  if state == 'done' then
    return {3, redis.call('HGETALL', k)}
  elseif state == 'failed' then
    return {4, redis.call('HGETALL', k)}
  elseif state == 'unknown' then
    return {5, redis.call('HGETALL', k)}
  end
  if token ~= '' and h[4] == token then
    return {1, redis.call('HGETALL', k)} -- a retried claim re-affirms itself
  end
  local lease = tonumber(h[2])
  if lease and now < lease then
    return {2, redis.call('HGETALL', k)}
  end
end
if fence > MAX_FENCE then
  return {-2, {}}
end
if fp == '' and live and h[5] then
  fp = h[5] -- a released or lapsed claim keeps its payload's fingerprint
end
local lease_ms = now + tonumber(ARGV[3])
local lease, expires = int(lease_ms), int(lease_ms + tonumber(ARGV[4]))
fence = int(fence)
if exists then
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
if fp ~= '' then
  return fence .. ' ' .. lease .. ' ' .. expires .. ' ' .. fp
end
return fence .. ' ' .. lease .. ' ' .. expires
