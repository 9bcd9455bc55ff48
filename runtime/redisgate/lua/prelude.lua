-- Shared by every script. KEYS[1] is always the record's key; no script touches
-- another key, so each one is atomic and routes to a single Cluster slot.
--
-- A record is one string value (doc.go, "Records"):
--   og1 <state> <fence> <lease> <done> <token len> <owner len> <fingerprint len>\n
--   <token><owner><fingerprint><result>
-- where lease and done are milliseconds before the key's expiry (its TTL is
-- expires_at) when the key has a TTL, and epoch milliseconds when it has none (an
-- unknown record); either may be empty, and a claimed record has no done. A key
-- that holds a hash is a record in the old format (one field per record field):
-- GET answers WRONGTYPE, and each script then runs its old-format branch, which
-- reads and writes the hash as before.
--
-- lib returns the helpers. They are made only when called: a Lua function
-- statement builds a closure every time a script runs, which the hot paths of
-- claim and finish need not pay for.
local function lib()
  local H = {}
  -- now_ms reads the server's clock (TIME: seconds, microseconds) in epoch ms.
  function H.now_ms()
    local t = redis.call('TIME')
    return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  -- int formats an integral number exactly: tostring would switch to exponent
  -- form past 14 digits, and '%d' (a C long) is exact up to MAX_FENCE and cheaper
  -- than floating-point formatting.
  function H.int(n)
    return string.format('%d', n)
  end
  -- get reads the record: its value, false when absent, or true when the key
  -- holds something else (a hash: the old format).
  function H.get(k)
    local v = redis.pcall('GET', k)
    if type(v) == 'table' then
      return true
    end
    return v
  end
  -- decode splits a value's header: state, fence, lease, done, the three
  -- lengths, and the position where the token starts. A value that is not a
  -- record gives nil.
  function H.decode(v)
    return string.match(v, '^og1 (%l+) (%d+) (%-?%d*) (%-?%d*) (%d+) (%d+) (%d+)\n()')
  end
  -- encode builds a value; body is token .. owner .. fingerprint .. result.
  function H.encode(state, fence, lease, done, lt, lo, lf, body)
    return 'og1 ' .. state .. ' ' .. fence .. ' ' .. lease .. ' ' .. done .. ' ' .. lt .. ' ' .. lo .. ' ' .. lf .. '\n' .. body
  end
  -- not_record is the error a value that does not decode gives.
  function H.not_record()
    return redis.error_reply('WRONGTYPE the key holds a string that is not an oncegate record')
  end
  return H
end
