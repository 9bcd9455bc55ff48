-- inspect: no ARGV. Returns {live, fields}: live is 1 when the record is present
-- and not past expires_at on the server clock (an unknown record never expires).
local fields = redis.call('HGETALL', KEYS[1])
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
if state ~= 'unknown' and expires and now_ms() >= expires then
  return {0, {}}
end
return {1, fields}
