-- inspect: no ARGV. Returns '<expiry> <value>' for a record (expiry -1 when the
-- key has no TTL), {0} when absent, or {live, fields} for an old-format record:
-- live is 1 when present and not past expires_at on the server clock (an unknown
-- record never expires). A record past its expiry is gone: Redis deletes it then.
local k = KEYS[1]
local H = lib()
local v = H.get(k)
if not v then
  return {0}
end
if v ~= true then
  return redis.call('PEXPIRETIME', k) .. ' ' .. v
end
local fields = redis.call('HGETALL', k)
if #fields == 0 then
  return {0, fields}
end
local state, expires
for i = 1, #fields, 2 do
  if fields[i] == 'state' then
    state = fields[i + 1]
  elseif fields[i] == 'expires_at' then
    expires = tonumber(fields[i + 1])
  end
end
if state ~= 'unknown' and expires and H.now_ms() >= expires then
  return {0, {}}
end
return {1, fields}
