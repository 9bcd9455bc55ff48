-- claim: ARGV = the new record as fence 1 would store it (its lease field is the
-- TTL in ms, its lengths and body the token, owner and fingerprint, '' for none),
-- and px = lease_ms + ttl_ms, the key's TTL. Answers:
--   an integer: won on an absent key at fence 1; the key's expiry in epoch ms;
--   'won <fence> <expiry>[ <fingerprint>]': won over a lapsed or released claim
--     (or an old-format record), the fingerprint being the one now stored;
--   '<expiry> <value>': the record as found, which the caller judges: a
--     fingerprint that differs is key reuse, else done, failed or unknown, or a
--     claim that is the caller's own (its token: re-affirmed) or another's
--     (held). Expiry is -1 for a key without a TTL. Only a record that answers
--     one of these comes back; a lapsed claim is taken over.
--   {-2}: fence exhausted; {status, fields}: an old-format record as found (as
--     before: 1 won, 2 held, 3 done, 4 failed, 5 unknown, -1 key reuse).
-- Liveness is the key's own: Redis deletes a record at its expiry.
local k = KEYS[1]
local new, px = ARGV[1], ARGV[2]
local v
if px ~= '0' then
  v = redis.pcall('SET', k, new, 'NX', 'GET', 'PX', px) -- the old value, or nil when set
  if not v then
    return redis.call('PEXPIRETIME', k)
  end
else
  v = redis.pcall('GET', k)
end
if v and type(v) ~= 'table' then
  if string.byte(v, 5) ~= 99 then -- not 'c'laimed: done, failed or unknown
    return redis.call('PEXPIRETIME', k) .. ' ' .. v
  end
  local lease = tonumber(string.match(v, '^og1 claimed %d+ (%-?%d*) '))
  if lease and redis.call('PTTL', k) > lease then -- now < lease_expiry = expiry - lease
    return redis.call('PEXPIRETIME', k) .. ' ' .. v
  end
end

-- The request, from the record it would write.
local H = lib()
local _, _, ttl, _, qlt, qlo, qlf, qp = H.decode(new)
qlt, qlo, qlf = tonumber(qlt), tonumber(qlo), tonumber(qlf)
local token = string.sub(new, qp, qp + qlt - 1)
local owner = string.sub(new, qp + qlt, qp + qlt + qlo - 1)
local fp = string.sub(new, qp + qlt + qlo, qp + qlt + qlo + qlf - 1)

local fence, sfp = 1, ''
if type(v) == 'table' then
  -- The old format: the old claim script, less its write.
  local h = redis.call('HMGET', k, 'fence', 'lease_expiry', 'expires_at', 'claim_token', 'fingerprint', 'state')
  local state = h[6]
  fence = (tonumber(h[1]) or 0) + 1
  local exp = tonumber(h[3])
  local now = H.now_ms()
  local live = state and (state == 'unknown' or not exp or now < exp)
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
      return {1, redis.call('HGETALL', k)}
    end
    local lease = tonumber(h[2])
    if lease and now < lease then
      return {2, redis.call('HGETALL', k)}
    end
    sfp = h[5] or ''
  end
elseif v then
  -- A claim whose lease has run out: the caller's own (re-affirmed) or one
  -- whose fingerprint differs (key reuse) answers with the record; any other is
  -- taken over.
  local st, f, _, _, lt, lo, lf, p = H.decode(v)
  lt, lo, lf = tonumber(lt), tonumber(lo), tonumber(lf)
  if st ~= 'claimed' or p + lt + lo + lf - 1 > #v then -- lengths past the end: not a record
    return H.not_record()
  end
  sfp = string.sub(v, p + lt + lo, p + lt + lo + lf - 1)
  if (fp ~= '' and sfp ~= '' and sfp ~= fp) or (token ~= '' and string.sub(v, p, p + lt - 1) == token) then
    return redis.call('PEXPIRETIME', k) .. ' ' .. v
  end
  fence = tonumber(f) + 1
end
if fence > MAX_FENCE then
  return {-2}
end
if fp == '' then
  fp = sfp -- a released or lapsed claim keeps its payload's fingerprint
end
fence = H.int(fence)
local exp
if px == '0' then
  -- A zero lease and TTL: the record is deleted at once.
  redis.call('DEL', k)
  exp = H.int(H.now_ms())
else
  redis.call('SET', k, H.encode('claimed', fence, ttl, '', qlt, qlo, #fp, token .. owner .. fp), 'PX', px)
  exp = H.int(redis.call('PEXPIRETIME', k))
end
if fp ~= '' then
  return 'won ' .. fence .. ' ' .. exp .. ' ' .. fp
end
return 'won ' .. fence .. ' ' .. exp
