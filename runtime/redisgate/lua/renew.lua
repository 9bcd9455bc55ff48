-- renew: ARGV = fence, lease_ms, ttl_ms. lease_expiry = now + lease; expires_at
-- (and the key's TTL) moves to lease_expiry + ttl when that is later. A lapsed
-- but un-reclaimed claim is renewed. Returns 1 when renewed, 0 when stale.
local k = KEYS[1]
local H = lib()
local v = H.get(k)
if not v then
  return 0
end
if v == true then -- the old format
  local h = redis.call('HMGET', k, 'state', 'fence', 'expires_at')
  if not (h[1] == 'claimed' and h[2] == ARGV[1]) then
    return 0
  end
  local lease = H.now_ms() + tonumber(ARGV[2])
  local expires = lease + tonumber(ARGV[3])
  local was = tonumber(h[3])
  if not was or expires > was then
    redis.call('HSET', k, 'lease_expiry', H.int(lease), 'expires_at', H.int(expires))
    redis.call('PEXPIREAT', k, H.int(expires))
  else
    redis.call('HSET', k, 'lease_expiry', H.int(lease))
  end
  return 1
end
local st, f, _, done, lt, lo, lf, p = H.decode(v)
if st ~= 'claimed' or f ~= ARGV[1] then
  return 0
end
local lease, ttl = tonumber(ARGV[2]), tonumber(ARGV[3])
local left = redis.call('PTTL', k) -- the old expiry less now
local body = string.sub(v, p)
if left < 0 or lease + ttl > left then
  -- The expiry moves to now + lease + ttl; done is kept relative to it as before.
  if lease + ttl == 0 then
    redis.call('DEL', k) -- expires_at = now: deleted at once
    return 1
  end
  if done ~= '' then
    done = H.int(tonumber(done) + lease + ttl - left)
  end
  redis.call('SET', k, H.encode('claimed', f, ARGV[3], done, lt, lo, lf, body), 'PX', H.int(lease + ttl))
else
  redis.call('SET', k, H.encode('claimed', f, H.int(left - lease), done, lt, lo, lf, body), 'KEEPTTL')
end
return 1
