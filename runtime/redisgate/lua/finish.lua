-- finish (complete or fail): ARGV = 'og1 claimed <fence> ' (the head of the
-- record it may finish), ttl_ms, 'og1 <state> <fence>  <ttl_ms>' (the head it
-- writes up to its done field: state done or failed, no lease, done = ttl),
-- and the result to store, if any (absent for none: one argument less to
-- convert). No lease guard: ownership is the fence, not the clock. done_at = now
-- and expires_at = now + ttl: the key's TTL becomes ttl and the record's done
-- field ttl. A finished record keeps no lease_expiry: nothing is excluded by a
-- lease once the outcome is recorded, and moving it with the new expiry would
-- cost a PTTL and a formatted number. Returns 1 when committed, 0 when the fence
-- is stale or the record not claimed.
local k = KEYS[1]
local want, ttl = ARGV[1], ARGV[2]
local v = redis.pcall('GET', k)
if not v then
  return 0
end
if type(v) == 'table' then -- the old format
  local H = lib()
  local h = redis.call('HMGET', k, 'state', 'fence')
  if h[1] ~= 'claimed' or h[2] ~= string.match(want, '(%d+) $') then
    return 0
  end
  local state = string.match(ARGV[3], '^og1 (%l+)')
  local now = H.now_ms()
  local expires = now + tonumber(ttl)
  if ARGV[4] then
    redis.call('HSET', k, 'state', state, 'done_at', H.int(now), 'expires_at', H.int(expires), 'result', ARGV[4])
  else
    redis.call('HSET', k, 'state', state, 'done_at', H.int(now), 'expires_at', H.int(expires))
  end
  redis.call('PEXPIREAT', k, H.int(expires))
  return 1
end
local n = #want
if string.sub(v, 1, n) ~= want then
  return 0
end
-- v is want .. lease .. ' ' (no done) .. ' ' .. lengths and body.
local q = string.find(v, ' ', n + 1, true)
if not q or string.byte(v, q + 1) ~= 32 then
  return lib().not_record()
end
if ttl == '0' then
  redis.call('DEL', k) -- expires_at = now: deleted at once
  return 1
end
redis.call('SET', k, ARGV[3] .. string.sub(v, q + 1) .. (ARGV[4] or ''), 'PX', ttl)
return 1
