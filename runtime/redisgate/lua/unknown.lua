-- mark unknown: ARGV = fence. The record loses expires_at and its TTL: it must
-- survive until resolved, so its lease is stored as epoch ms from then on. Returns
-- 1 when marked, 0 when stale.
local k = KEYS[1]
local H = lib()
local v = H.get(k)
if not v then
  return 0
end
if v == true then -- the old format
  local h = redis.call('HMGET', k, 'state', 'fence')
  if not (h[1] == 'claimed' and h[2] == ARGV[1]) then
    return 0
  end
  redis.call('HSET', k, 'state', 'unknown')
  redis.call('HDEL', k, 'expires_at')
  redis.call('PERSIST', k)
  return 1
end
local st, f, lease, done, lt, lo, lf, p = H.decode(v)
if st ~= 'claimed' or f ~= ARGV[1] then
  return 0
end
local exp = redis.call('PEXPIRETIME', k)
if exp >= 0 then
  if lease ~= '' then
    lease = H.int(exp - tonumber(lease))
  end
  if done ~= '' then
    done = H.int(exp - tonumber(done))
  end
end
redis.call('SET', k, H.encode('unknown', f, lease, done, lt, lo, lf, string.sub(v, p))) -- no TTL
return 1
