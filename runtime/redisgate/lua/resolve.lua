-- resolve: ARGV = as_done ('1' or '0'), ttl_ms. Moves an unknown record to done
-- (done_at = now) or to a lapsed claim with fence+1 and no claim token, either
-- with expires_at = now + ttl and the key's TTL set again. Returns {1} when
-- resolved, {-1} when absent, {-3, state} when not unknown, {-2} when fence+1
-- would pass MAX_FENCE.
local k = KEYS[1]
local H = lib()
local v = H.get(k)
if not v then
  return {-1}
end
if v == true then -- the old format
  local h = redis.call('HMGET', k, 'state', 'fence')
  if not h[1] then
    return {-1}
  end
  if h[1] ~= 'unknown' then
    return {-3, h[1]}
  end
  local now = H.now_ms()
  local expires = now + tonumber(ARGV[2])
  if ARGV[1] == '1' then
    redis.call('HSET', k, 'state', 'done', 'done_at', H.int(now), 'expires_at', H.int(expires))
  else
    local fence = tonumber(h[2]) or 0 -- a missing fence counts as 0
    if fence >= MAX_FENCE then
      return {-2}
    end
    redis.call('HSET', k, 'state', 'claimed', 'fence', H.int(fence + 1),
      'lease_expiry', H.int(now), 'expires_at', H.int(expires))
    redis.call('HDEL', k, 'claim_token')
  end
  redis.call('PEXPIREAT', k, H.int(expires))
  return {1}
end
local st, f, lease, _, lt, lo, lf, p = H.decode(v)
if not st then
  return H.not_record()
end
if st ~= 'unknown' then
  return {-3, st}
end
local ttl = ARGV[2]
if ARGV[1] == '1' then
  -- An unknown record's lease is epoch ms; it becomes relative to now + ttl.
  if lease ~= '' then
    lease = H.int(H.now_ms() + tonumber(ttl) - tonumber(lease))
  end
  v = H.encode('done', f, lease, ttl, lt, lo, lf, string.sub(v, p))
else
  if tonumber(f) >= MAX_FENCE then
    return {-2}
  end
  lt = tonumber(lt)
  v = H.encode('claimed', H.int(tonumber(f) + 1), ttl, '', 0, lo, lf, string.sub(v, p + lt))
end
if ttl == '0' then
  redis.call('DEL', k) -- expires_at = now: deleted at once
else
  redis.call('SET', k, v, 'PX', ttl)
end
return {1}
