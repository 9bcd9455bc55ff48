-- release: ARGV = fence. lease_expiry = now, fence+1, claim token cleared, so the
-- key is claimable at once and the released claim's retry cannot re-affirm it;
-- expires_at (and the key's TTL) stay. Returns 1 when released, 0 when stale,
-- -2 when fence+1 would pass MAX_FENCE.
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
  if tonumber(h[2]) >= MAX_FENCE then
    return -2
  end
  redis.call('HSET', k, 'fence', H.int(tonumber(h[2]) + 1), 'lease_expiry', H.int(H.now_ms()))
  redis.call('HDEL', k, 'claim_token')
  return 1
end
local st, f, _, done, lt, lo, lf, p = H.decode(v)
if st ~= 'claimed' or f ~= ARGV[1] then
  return 0
end
if tonumber(f) >= MAX_FENCE then
  return -2
end
lt = tonumber(lt)
-- lease_expiry = now: its distance to the expiry is the key's PTTL.
redis.call('SET', k, H.encode('claimed', H.int(tonumber(f) + 1), H.int(redis.call('PTTL', k)), done, 0, lo, lf,
  string.sub(v, p + lt)), 'KEEPTTL')
return 1
