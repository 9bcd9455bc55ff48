#!/bin/bash
# callgrind.sh: server-side cost of redisgate's scripts and of the benchmark's
# baselines, in instructions counted by valgrind's callgrind on a private
# redis-server (repeatable whatever else the machine does). Prints the average
# instructions the server spends per command, over N commands sent by redis-cli.
# Usage: runtime/redisgate/testdata/callgrind.sh [port]   (needs valgrind, redis-server, redis-cli)
set -euo pipefail
P=${1:-6597}
N=1000
LUA=$(cd "$(dirname "$0")/../lua" && pwd)
W=$(mktemp -d)
trap 'redis-cli -p $P shutdown nosave >/dev/null 2>&1 || true; rm -rf "$W"' EXIT
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$W/cg.%p" \
  redis-server --port "$P" --save "" --appendonly no --dir "$W" --daemonize no >"$W/log" 2>&1 &
VG=$!
for _ in $(seq 1 100); do redis-cli -p "$P" ping 2>/dev/null | grep -q PONG && break; sleep 0.2; done
# The same source the Go code builds: MAX_FENCE, the prelude, the operation; from
# lua/ (the record format) or from testdata/v0/ (the old hash format, kept for the
# compatibility test and for this comparison).
build() { echo "local MAX_FENCE = 9007199254740991"; cat "$1/prelude.lua"; echo; cat "$1/$2.lua"; }
V0=$(cd "$(dirname "$0")/v0" && pwd)
CLAIM=$(redis-cli -p "$P" SCRIPT LOAD "$(build "$LUA" claim)")
FINISH=$(redis-cli -p "$P" SCRIPT LOAD "$(build "$LUA" finish)")
CLAIM0=$(redis-cli -p "$P" SCRIPT LOAD "$(build "$V0" claim)")
FINISH0=$(redis-cli -p "$P" SCRIPT LOAD "$(build "$V0" finish)")
GET=$(redis-cli -p "$P" SCRIPT LOAD 'return redis.call("get", KEYS[1])')
# bsm/redislock v0.9.4's obtain and release scripts (redsync v4's delete script is
# the same GET-compare-DEL as redislock's release).
OBTAIN=$(redis-cli -p "$P" SCRIPT LOAD 'if redis.call("set", KEYS[1], ARGV[1], "NX", "PX", ARGV[3]) then return redis.status_reply("OK") end
local offset = tonumber(ARGV[2])
if redis.call("getrange", KEYS[1], 0, offset-1) == string.sub(ARGV[1], 1, offset) then return redis.call("set", KEYS[1], ARGV[1], "PX", ARGV[3]) end')
RELEASE=$(redis-cli -p "$P" SCRIPT LOAD 'if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end')
gen() { for i in $(seq 1 $N); do printf "$1\n" "$i"; done >"$W/$2.txt"; }
gen "PING" ping
# Store.Claim's arguments (lease 30 s, TTL 60 s, token tok-abcdefgh, owner
# owner-host/1234, no fingerprint): the record at fence 1, and lease + TTL.
REC='"og1 claimed 1 60000  12 15 0\\ntok-abcdefghowner-host/1234"'
gen "EVALSHA $CLAIM 1 g:%d $REC 90000" claim
gen "EVALSHA $FINISH 1 g:%d \"og1 claimed 1 \" 60000 \"og1 done 1 \" \"\"" complete
gen "EVALSHA $CLAIM 1 g:%d $REC 90000" claim_duplicate
gen "EVALSHA $CLAIM 1 h:%d $REC 90000" claim_prep
gen "EVALSHA $CLAIM 1 h:%d ${REC/abcdefgh/ijklmnop} 90000" claim_in_progress
gen "EVALSHA $GET 1 g:%d" get_script
gen "EVALSHA $CLAIM0 1 o:%d tok-abcdefgh owner-host/1234 30000 60000 \"\"" old_claim
gen "EVALSHA $FINISH0 1 o:%d 1 60000 done \"\"" old_complete
gen "EVALSHA $CLAIM0 1 o:%d tok-abcdefgh owner-host/1234 30000 60000 \"\"" old_claim_duplicate
gen "SET f:%d claimed NX PX 30000" set_nx_px
gen "SET f:%d done XX PX 60000" set_xx_px
gen "EVALSHA $OBTAIN 1 l:%d tokentokentokentokentok 22 30000" redislock_obtain
gen "EVALSHA $RELEASE 1 l:%d tokentokentokentokentok" redislock_release
for name in ping claim complete claim_duplicate claim_prep claim_in_progress get_script old_claim old_complete old_claim_duplicate \
  set_nx_px set_xx_px redislock_obtain redislock_release; do
  callgrind_control -i on "$VG" >/dev/null 2>&1; callgrind_control -z "$VG" >/dev/null 2>&1
  redis-cli -p "$P" <"$W/$name.txt" >/dev/null
  callgrind_control -d "$name" "$VG" >/dev/null 2>&1; callgrind_control -i off "$VG" >/dev/null 2>&1
  f=$(grep -l "^desc: Trigger: dump $name\$" "$W"/cg.*.* | head -1)
  printf '%-18s %8d instructions/command\n' "$name" $(( $(awk '/^totals:/ {print $2}' "$f") / N ))
done
