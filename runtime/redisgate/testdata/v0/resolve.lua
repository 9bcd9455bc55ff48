-- resolve: ARGV = as_done ('1' or '0'), ttl_ms. Moves an unknown record to done
-- (done_at = now) or to a lapsed claim with fence+1 and no claim token, either
-- with expires_at = now + ttl and the key's TTL set again. Returns {1} when
-- resolved, {-1} when absent, {-3, state} when not unknown, {-2} when fence+1
-- would pass MAX_FENCE.
local k = KEYS[1]
local h = redis.call('HMGET', k, 'state', 'fence')
if not h[1] then
  return {-1}
end
if h[1] ~= 'unknown' then
  return {-3, h[1]}
end
local now = now_ms()
local expires = now + tonumber(ARGV[2])
if ARGV[1] == '1' then
  redis.call('HSET', k, 'state', 'done', 'done_at', int(now), 'expires_at', int(expires))
else
  local fence = tonumber(h[2]) or 0 -- a missing fence counts as 0
  if fence >= MAX_FENCE then
    return {-2}
  end
  redis.call('HSET', k, 'state', 'claimed', 'fence', int(fence + 1),
    'lease_expiry', int(now), 'expires_at', int(expires))
  redis.call('HDEL', k, 'claim_token')
end
redis.call('PEXPIREAT', k, int(expires))
return {1}
