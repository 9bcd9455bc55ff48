-- finish (complete or fail): ARGV = fence, ttl_ms, state ('done' or 'failed'),
-- result ('' for none). No lease guard: ownership is the fence, not the clock.
-- done_at = now and expires_at = now + ttl: the key's TTL becomes ttl, the record's
-- done field ttl, and its lease field moves by the change of expiry (PTTL is the
-- old expiry less now). Returns 1 when committed, 0 when the fence is stale or the
-- record not claimed.
local k = KEYS[1]
local v = get(k)
if not v then
  return 0
end
if v == true then -- the old format
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
end
local st, f, lease, _, lt, lo, lf, p = decode(v)
if st ~= 'claimed' or f ~= ARGV[1] then
  return 0
end
if ARGV[2] == '0' then
  redis.call('DEL', k) -- expires_at = now: deleted at once
  return 1
end
if lease ~= '' then
  lease = int(tonumber(ARGV[2]) + tonumber(lease) - redis.call('PTTL', k))
end
redis.call('SET', k, encode(ARGV[3], f, lease, ARGV[2], lt, lo, lf,
  string.sub(v, p, p + lt + lo + lf - 1) .. ARGV[4]), 'PX', ARGV[2])
return 1
