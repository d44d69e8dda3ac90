#!/usr/bin/env bash
# tracking.sh: a trusted_local lease tracks every process its agent starts,
# including those that leave its session (issue 16 item 8, issue 18; SPEC
# 3, 5.5, 9.2): `ls` counts them; a daemon started with setsid (reparented
# to init) is ended before the lease is done, and by cancel; an agent that
# ignores SIGHUP outlives its SIGKILLed holder only until reconcile, which
# kills the tracking cgroup and says whom in a receipt; a daemon the agent's
# profile expects outlives the lease, listed, until reject ends it; a busy
# daemon's CPU keeps the lease working. Every process is judged from the
# host by the PID it wrote, never by its command line.
set -u
. "$(dirname "$0")/lib.bash"

# jq FILTER on the lease's `ls --all --json` object.
lease_field() {
	"$CORRAL" ls --all --json | jq -r --arg id "$1" ".[] | select(.id == \$id) | $2"
}
# gone_or_kill MSG PID START: PID is gone (else it fails, and is killed)
gone_or_kill() {
	if pid_gone "$2" "$3"; then
		pass "$1"
	else
		fail "$1"
		kill -9 "$2" 2>/dev/null
	fi
}
# wait_file FILE: until FILE holds something, at most 30 s
wait_file() { poll test -s "$1"; }
# the receipts of KIND of lease ID, as JSON lines
receipts() {
	"$CORRAL" show "$1" --json | jq -c --arg k "$2" '.receipts[] | select(.kind == $k)'
}
# jr JSON FILTER [ARGS...]: JSON is not empty and FILTER holds on it
jr() {
	local j=$1 f=$2; shift 2
	[ -n "$j" ] && jq -e "$@" "$f" <<<"$j" >/dev/null
}
# the cgroup directories of the lease's journal that still exist
cg_left() {
	"$CORRAL" show "$1" --json | jq -r '.resources[] | select(.kind == "cgroup") | .identity' |
		awk 'NF == 2 {print $2}' | while read -r d; do [ -d "$d" ] && echo "$d"; done
}
# the tracking cgroup's directories as journaled (any state)
cg_dirs() {
	"$CORRAL" show "$1" --json | jq -r '.resources[] | select(.kind == "cgroup") | .identity' |
		awk 'NF == 2 {print $2}'
}

# --- a daemon that leaves the session, then the agent exits ------------------
d1="$TMP/d1.pid"
id=$("$CORRAL" new --sandbox trusted_local --name daemon -- sh -c "
	setsid sh -c 'echo \$\$ >$d1; while :; do sleep 1; done' </dev/null >/dev/null 2>&1 &
	while [ ! -s $d1 ]; do sleep 0.1; done
	echo up
	while [ ! -e $TMP/go1 ]; do sleep 0.1; done
	exit 0")
check "the agent started its daemon" wait_file "$d1"
dpid=$(cat "$d1")
dstart=$(pid_start "$dpid")
check "the daemon left the agent's session" \
	test "$(ps -o sid= -p "$dpid" | tr -d ' ')" = "$dpid"
check "the lease has a tracking cgroup" test -n "$(cg_left "$id")"
check "the daemon is in it" grep -qx "$dpid" <(for d in $(cg_left "$id"); do cat "$d/cgroup.procs"; done)
n=$(lease_field "$id" .processes)
check "ls --json counts its processes (agent, daemon, their sleeps: $n)" test "$n" -ge 2
check "ls shows PROCS" grep -q "PROCS" <("$CORRAL" ls)
check "ls's row has the count" \
	awk -v id="$id" '$1 == id && $6 ~ /^[0-9]+$/ && $6 >= 2 {f = 1} END {exit !f}' <("$CORRAL" ls)
# the agent exits; the daemon, reparented to init, keeps running until the
# holder ends it
touch "$TMP/go1"
check "the lease ends done" "$CORRAL" wait "$id" --until done --timeout 30
# at the moment the lease is done, the daemon is already gone (not polled)
gone_or_kill "the daemon is gone once the lease is done" "$dpid" "$dstart"
r=$(receipts "$id" processes_ended)
check "receipt processes_ended names the daemon by PID" \
	jr "$r" '.fields.processes | map(.pid) | index($p) != null' --argjson p "$dpid"
check "receipt: none left" jr "$r" '.fields.left == 0 and .fields.found >= 1'
check "receipt: it came before done" test "$(jq -r .seq <<<"$r")" -lt \
	"$("$CORRAL" show "$id" --json | jq '[.receipts[] | select(.kind == "agent_exited")][0].seq')"
check "the holder ends" poll holder_gone "$id"
check "the tracking cgroup is removed" test -z "$(cg_left "$id")"
check "cleanup is not pending" test "$(lease_field "$id" .cleanup)" != pending
check "ls: no processes counted once it is removed" test "$(lease_field "$id" .processes)" = null

# --- cancel ends a daemon too ------------------------------------------------
d2="$TMP/d2.pid"
id2=$("$CORRAL" new --sandbox trusted_local --allow-control --name cancelme -- sh -c "
	( setsid sh -c 'echo \$\$ >$d2; exec sleep 1000' </dev/null >/dev/null 2>&1 & )
	while :; do sleep 1; done")
check "the second agent started its double-forked daemon" wait_file "$d2"
d2pid=$(cat "$d2")
d2start=$(pid_start "$d2pid")
"$CORRAL" cancel "$id2" >/dev/null
check "cancelled" "$CORRAL" wait "$id2" --until cancelled --timeout 30
gone_or_kill "cancel: the daemon is gone once the lease is cancelled" "$d2pid" "$d2start"
check "cancel: receipt names it" jr "$(receipts "$id2" processes_ended)" \
	'.fields.processes | map(.pid) | index($p) != null' --argjson p "$d2pid"

# --- an agent that ignores SIGHUP, its holder SIGKILLed -----------------------
d3="$TMP/d3.pid"
id3=$("$CORRAL" new --sandbox trusted_local --name stubborn -- sh -c "
	trap '' HUP
	echo \$\$ >$d3
	while :; do sleep 1; done")
check "the stubborn agent runs" wait_file "$d3"
apid=$(cat "$d3")
astart=$(pid_start "$apid")
hpid=$("$CORRAL" show "$id3" --json | jq -r .holder_pid)
hstart=$(pid_start "$hpid")
kill -9 "$hpid"
check "the holder is gone" poll pid_gone "$hpid" "$hstart"
# SIGHUP reached it (the terminal closed) and it ignored it
if pid_gone "$apid" "$astart"; then
	fail "the agent outlives its holder (ignores SIGHUP)"
else
	pass "the agent outlives its holder (ignores SIGHUP)"
fi
check "ls still counts it" test "$(lease_field "$id3" .processes)" -ge 1
out=$("$CORRAL" reconcile 2>&1)
check "reconcile: holder_lost" grep -q "holder_lost.*$id3" <<<"$out"
gone_or_kill "reconcile: the agent is gone" "$apid" "$astart"
check "the lease failed holder_lost" jq_eq "$("$CORRAL" show "$id3" --json)" \
	'"\(.lease_state) \(.failed_reason)"' "failed holder_lost"
r3=$(receipts "$id3" processes_ended)
check "receipt: reconcile ended the agent, by PID" jr "$r3" \
	'.fields.by == "reconcile" and (.fields.processes | map(.pid) | index($p) != null) and .fields.left == 0' \
	--argjson p "$apid"
check "the tracking cgroup is removed" test -z "$(cg_left "$id3")"
check "cleanup confirmed" test "$(lease_field "$id3" .cleanup)" = confirmed
# gc then leaves nothing of it, its cgroup directories included
dirs=$(cg_dirs "$id3")
check "gc removes it" "$CORRAL" gc "$id3"
for d in $dirs; do check "no cgroup left: $d" test ! -d "$d"; done
# --- a daemon the profile expects outlives the lease, listed; reject ends it --
# agents/dtest.sandbox names corral-testd (a copy of sleep, so its comm is
# that name); a daemon the profile does not name is ended as before.
mkdir -p "$XDG_CONFIG_HOME/corral/agents"
printf '[agent]\n' >"$XDG_CONFIG_HOME/corral/agents/dtest.rules"
printf '[processes]\nexpected_daemon = corral-testd\n' \
	>"$XDG_CONFIG_HOME/corral/agents/dtest.sandbox"
cp "$(command -v sleep)" "$TMP/corral-testd"
d4="$TMP/d4.pid" d5="$TMP/d5.pid"
id4=$("$CORRAL" new --sandbox trusted_local --agent dtest --name expected -- sh -c "
	setsid sh -c 'echo \$\$ >$d4; exec $TMP/corral-testd 1000' </dev/null >/dev/null 2>&1 &
	setsid sh -c 'echo \$\$ >$d5; exec sleep 1000' </dev/null >/dev/null 2>&1 &
	while [ ! -e $TMP/go4 ]; do sleep 0.1; done
	exit 0")
check "the agent started its expected daemon" wait_file "$d4"
check "and one its profile does not name" wait_file "$d5"
xpid=$(cat "$d4") ypid=$(cat "$d5")
check "the expected daemon runs as corral-testd" \
	poll grep -qx corral-testd "/proc/$xpid/comm"
check "the other runs as sleep" poll grep -qx sleep "/proc/$ypid/comm"
xstart=$(pid_start "$xpid") ystart=$(pid_start "$ypid")
touch "$TMP/go4"
check "expected: the lease ends done" "$CORRAL" wait "$id4" --until done --timeout 30
if pid_gone "$xpid" "$xstart"; then
	fail "expected: the expected daemon still runs once the lease is done"
else
	pass "expected: the expected daemon still runs once the lease is done"
fi
gone_or_kill "expected: the daemon not named is gone" "$ypid" "$ystart"
r4=$(receipts "$id4" processes_ended)
check "expected: the receipt lists it by PID and comm" jr "$r4" \
	'.fields.expected | map(select(.comm == "corral-testd") | .pid) | index($p) != null' \
	--argjson p "$xpid"
check "expected: the other is not listed as expected, none else left" jr "$r4" \
	'(.fields.expected | map(.pid) | index($q) == null) and .fields.left == 0' \
	--argjson q "$ypid"
check "expected: show names it" grep -q "corral-testd" <("$CORRAL" show "$id4")
check "expected: the holder ends" poll holder_gone "$id4"
check "expected: its tracking cgroup stays" test -n "$(cg_left "$id4")"
check "expected: the daemon is in it" grep -qx "$xpid" \
	<(for d in $(cg_left "$id4"); do cat "$d/cgroup.procs"; done)
check "expected: ls counts it" test "$(lease_field "$id4" .processes)" = 1
dirs4=$(cg_dirs "$id4")
check "expected: reject" "$CORRAL" reject "$id4"
gone_or_kill "expected: reject ended the daemon" "$xpid" "$xstart"
check "expected: a receipt says reject ended it, by PID" \
	jr "$(receipts "$id4" processes_ended | tail -n 1)" \
	'.fields.by == "reject" and (.fields.processes | map(.pid) | index($p) != null) and .fields.left == 0' \
	--argjson p "$xpid"
check "expected: the tracking cgroup is removed" test -z "$(cg_left "$id4")"
check "expected: gc removes the lease" "$CORRAL" gc "$id4"
for d in $dirs4; do check "expected: no cgroup left: $d" test ! -d "$d"; done

# --- a daemon's work counts for the lease's activity (issue 20 item 6) ------
# The agent waits on its terminal in epoll (as an event-loop TUI does: no
# read, no CPU) while a daemon that left its session, reparented to init,
# sleeps, then burns CPU (a turn it streams), then ends: prompt, working by
# the CPU of the tracking cgroup's processes, prompt again, done.
d6="$TMP/d6.pid"
id6=$("$CORRAL" new --sandbox trusted_local --name busyd -- python3 -c "
import os, select, time
if os.fork() == 0:
    os.setsid()
    if os.fork():
        os._exit(0)
    open('$d6', 'w').write(str(os.getpid()))
    while not os.path.exists('$TMP/start6'):
        time.sleep(0.1)
    while not os.path.exists('$TMP/stop6'):
        pass
    os._exit(0)
os.wait()
print('waiting', flush=True)
e = select.epoll()
e.register(0, select.EPOLLIN)
while not os.path.exists('$TMP/exit6'):
    e.poll(0.2)")
check "busy daemon: it started" wait_file "$d6"
bpid=$(cat "$d6")
bstart=$(pid_start "$bpid")
check "busy daemon: it was reparented away from the agent" \
	test "$(ps -o ppid= -p "$bpid" | tr -d ' ')" = 1
check "busy daemon: idle, the lease waits on its terminal" \
	"$CORRAL" wait "$id6" --until prompt --timeout 30
touch "$TMP/start6"
check "busy daemon: busy, the lease is working" \
	"$CORRAL" wait "$id6" --until working --timeout 30
check "busy daemon: ... by the CPU of its processes" \
	jq -e '.signal == "fact:cpu"' <<<"$("$CORRAL" explain "$id6" --json)"
touch "$TMP/stop6"
gone_or_kill "busy daemon: it ends" "$bpid" "$bstart"
check "busy daemon: then the lease waits on its terminal again" \
	"$CORRAL" wait "$id6" --until prompt --timeout 30
touch "$TMP/exit6"
check "busy daemon: the agent exits, done" "$CORRAL" wait "$id6" --until done --timeout 30
check "busy daemon: the holder ends" poll holder_gone "$id6"
check "busy daemon: reject" "$CORRAL" reject "$id6"
check "busy daemon: gc" "$CORRAL" gc "$id6"

# the state directory's own tag directories, made for these leases
tag=$(printf %s "$CORRAL_STATE_DIR" | sha256sum | cut -c1-16)
for d in /sys/fs/cgroup/*/corral/state-$tag; do
	[ -d "$d" ] || continue
	check "nothing under $d" test -z "$(find "$d" -mindepth 1 -type d -name 'lease-*' -print -quit)"
	rmdir "$d" 2>/dev/null
done

finish
