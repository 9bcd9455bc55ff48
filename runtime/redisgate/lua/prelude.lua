-- Shared by every script. KEYS[1] is always the record's key; no script touches
-- another key, so each one is atomic and routes to a single Cluster slot.
--
-- A record is one string value (doc.go, "Records"):
--   og1 <state> <fence> <lease> <done> <token len> <owner len> <fingerprint len>\n
--   <token><owner><fingerprint><result>
-- where lease and done are milliseconds before the key's expiry (its TTL is
-- expires_at) when the key has a TTL, and epoch milliseconds when it has none (an
-- unknown record); either may be empty. A key that holds a hash is a record in the
-- old format (one field per record field): GET answers WRONGTYPE, and each script
-- then runs its old-format branch, which reads and writes the hash as before.

-- now_ms reads the server's clock (TIME: seconds, microseconds) in epoch milliseconds.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- int formats an integral number exactly: tostring would switch to exponent form
-- past 14 digits, and '%d' (a C long) is exact up to MAX_FENCE and cheaper than
-- floating-point formatting.
local function int(n)
  return string.format('%d', n)
end

-- held reports whether an old-format record is claimed with exactly the fence in
-- ARGV[1]. Fences are compared as the decimal strings both sides write.
local function held(state, fence)
  return state == 'claimed' and fence == ARGV[1]
end

-- get reads the record: its value, or false when absent, or true when the key
-- holds something else (a hash: the old format).
local function get(k)
  local v = redis.pcall('GET', k)
  if type(v) == 'table' then
    return true
  end
  return v
end

-- decode splits a value's header: state, fence, lease, done, the three lengths,
-- and the position where the token starts. A value that is not a record gives nil.
local function decode(v)
  return string.match(v, '^og1 (%l+) (%d+) (%-?%d*) (%-?%d*) (%d+) (%d+) (%d+)\n()')
end

-- encode builds a value; body is token .. owner .. fingerprint .. result.
local function encode(state, fence, lease, done, lt, lo, lf, body)
  return 'og1 ' .. state .. ' ' .. fence .. ' ' .. lease .. ' ' .. done .. ' ' .. lt .. ' ' .. lo .. ' ' .. lf .. '\n' .. body
end

-- not_record is the error a value that does not decode gives.
local function not_record()
  return redis.error_reply('WRONGTYPE the key holds a string that is not an oncegate record')
end
