-- advance fence: ARGV = at_least (at most MAX_FENCE, checked by the caller),
-- ttl_ms. Sets fence = max(fence, at_least), never lowering it, and returns the
-- fence now stored. An absent key gets a lapsed claim (lease_expiry = now) with
-- expires_at = now + ttl.
local k = KEYS[1]
local H = lib()
local at = tonumber(ARGV[1])
local v = H.get(k)
if v == true then -- the old format
  local f = redis.call('HGET', k, 'fence')
  if not f or not tonumber(f) or at > tonumber(f) then -- a missing fence counts as lower
    redis.call('HSET', k, 'fence', H.int(at))
    return H.int(at)
  end
  return f
end
if v then
  local st, f, lease, done, lt, lo, lf, p = H.decode(v)
  if not st then
    return H.not_record()
  end
  if at > tonumber(f) then
    redis.call('SET', k, H.encode(st, H.int(at), lease, done, lt, lo, lf, string.sub(v, p)), 'KEEPTTL')
    return H.int(at)
  end
  return f
end
if at < 0 then
  at = 0
end
if ARGV[2] ~= '0' then -- a zero TTL: expires_at = now, deleted at once
  redis.call('SET', k, H.encode('claimed', H.int(at), ARGV[2], '', 0, 0, 0, ''), 'PX', ARGV[2])
end
return H.int(at)
