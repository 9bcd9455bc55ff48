-- Shared by every script. KEYS[1] is always the record's hash; no script touches
-- another key, so each one is atomic and routes to a single Cluster slot.

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

-- held reports whether the record is claimed with exactly the fence in ARGV[1].
-- Fences are compared as the decimal strings both sides write.
local function held(state, fence)
  return state == 'claimed' and fence == ARGV[1]
end
