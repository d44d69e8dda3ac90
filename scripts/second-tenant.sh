#!/usr/bin/env bash
# second-tenant.sh: a second corral state directory with live sandboxed
# leases, working while `make test` runs its suites beside it (issue 15,
# SPEC 9.2: no state directory lists, signals or removes another's).
#
#   scripts/second-tenant.sh start DIR   state directory DIR/state, its
#                                        repository DIR/repo; two agents
#                                        that keep working and one blocked
#                                        at a question
#   scripts/second-tenant.sh stop DIR    judge and clean up: prints
#                                        "tenant: N passed, N failed"
#
# stop checks, from the host: every lease of DIR is still live with the
# holder it started with (same PID and start time), the working agents
# are still working (their heartbeat moved on since start and moves
# still), nothing of theirs was killed (no agent_exited, no failure), a
# brand-new state directory's reconcile (twice) names none of them, and
# DIR's own reconcile finds no orphan and no lost holder. Then the
# blocked lease is answered and must end with a result, the workers are
# cancelled and must end cancelled, and everything is removed by gc.
# CORRAL (the binary; default build/tui/corral).
set -u
cmd=${1:-} DIR=${2:-}
[ -n "$DIR" ] && { [ "$cmd" = start ] || [ "$cmd" = stop ]; } ||
	{ echo "usage: $0 start|stop DIR" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CORRAL=$(realpath "${CORRAL:-$ROOT/build/tui/corral}")
export CORRAL_STATE_DIR=$DIR/state XDG_CONFIG_HOME=$DIR/config
unset CORRAL_TEST_RUN
WORKERS=2
c() { (cd "$DIR/repo" && "$CORRAL" "$@" </dev/null); }
js() { c show "$1" --json 2>/dev/null; }
# pid_start PID: field 22 of /proc/PID/stat
pid_start() { local s; s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1; s=${s##*) }; set -- $s; echo "${20}"; }
beat() { cat "$CORRAL_STATE_DIR/leases/$1/work/beat" 2>/dev/null || echo 0; }

start() {
	[ "$(id -u)" = 0 ] || { echo "tenant: needs root" >&2; return 1; }
	rm -rf "$DIR" && mkdir -p "$DIR" "$XDG_CONFIG_HOME/corral" || return 1
	sh "$ROOT/demo/repo.sh" "$DIR/repo" "$ROOT/demo/agents" >/dev/null || return 1
	printf '[limits]\nwall_time = 4h\nmemory = 128M\npids = 64\n' \
		>"$XDG_CONFIG_HOME/corral/policy.ini"
	: >"$DIR/leases"
	for n in $(seq "$WORKERS"); do
		id=$(c new --sandbox bwrap --name "tenant-work-$n" -- /bin/sh -c \
		    'i=0; while :; do i=$((i+1)); echo $i >/work/beat; echo "beat $i"; sleep 1; done') ||
		    return 1
		echo "work $id" >>"$DIR/leases"
	done
	id=$(c new --sandbox bwrap --name tenant-ask -- /bin/sh /work/.demo/ask.sh) || return 1
	echo "ask $id" >>"$DIR/leases"
	# Live, each with its holder, the workers beating: recorded for stop.
	: >"$DIR/start"
	while read -r kind id; do
		for _ in $(seq 150); do
			case $kind in
			work) [ "$(beat "$id")" -ge 2 ] && break ;;
			ask) c screen "$id" 2>/dev/null | grep -q '(y/n)' && break ;;
			esac
			sleep 0.2
		done
		pid=$(js "$id" | jq -r '.holder_pid // empty')
		echo "$kind $id $pid $(pid_start "$pid") $(beat "$id")" >>"$DIR/start"
	done <"$DIR/leases"
	echo "tenant: $(wc -l <"$DIR/leases") leases live in $CORRAL_STATE_DIR"
}

PASS=0 FAIL=0
ok() { if "${@:2}" >/dev/null 2>&1; then PASS=$((PASS + 1)); else FAIL=$((FAIL + 1)); echo "tenant: FAIL - $1"; fi; }
live() { # ID PID START: the lease runs, with the holder it started with
	[ "$(js "$1" | jq -r .lease_state)" = running ] &&
	    [ "$(pid_start "$2")" = "$3" ]
}
not_killed() { # ID: no agent exit, no failure
	js "$1" | jq -e '.failed_reason == null and ([.receipts[] |
	    select(.kind == "agent_exited")] | length == 0)'
}
moving() { # ID FROM: the heartbeat is past FROM and moves on
	local b
	b=$(beat "$1")
	[ "$b" -gt "$2" ] || return 1
	for _ in $(seq 30); do [ "$(beat "$1")" -gt "$b" ] && return 0; sleep 0.2; done
	return 1
}
ended() { # ID STATE...: the lease ends in one of the states
	local s
	c wait "$1" --until "$(IFS=,; echo "${*:2}")" --timeout 60 >/dev/null 2>&1
	s=$(js "$1" | jq -r .lease_state)
	for w in "${@:2}"; do [ "$s" = "$w" ] && return 0; done
	return 1
}
unnamed_by_fresh() { # a brand-new state directory's inventory
	local fresh=$DIR/fresh out i
	rm -rf "$fresh"
	for i in 1 2; do
		out=$(cd "$DIR/repo" && CORRAL_STATE_DIR=$fresh "$CORRAL" reconcile --json) || return 1
	done
	rm -rf "$fresh"
	while read -r _ id _; do grep -qF "$id" <<<"$out" && return 1; done <"$DIR/start"
	return 0
}
own_clean() { # DIR's own reconcile: no orphan, no lost holder
	c reconcile --json | jq -e '[.findings[] | select(.kind == "orphan" or
	    .kind == "holder_lost")] | length == 0'
}

# ID PID START BEAT: what the lease is now, for the log when a check fails
# (its state, activity, failure, holder, last receipts; the recorded holder
# still running or not; the heartbeat then and now).
explain() {
	local j rc
	j=$(js "$1"); rc=$?
	echo "tenant: # $1: show exit $rc: $(jq -c '{lease_state, activity,
	    failed_reason, holder_pid, cleanup, last: [.receipts[-4:][] | .kind]}' \
	    <<<"$j" 2>&1 | head -c 600)"
	echo "tenant: # $1: holder $2 start $3 now $(pid_start "$2" || echo gone);" \
	    "heartbeat at start $4, now $(beat "$1"); ls: $(c ls 2>&1 | grep -F "$1" | head -c 300)"
}

stop() {
	local f0
	[ -s "$DIR/start" ] || { echo "tenant: FAIL - never started ($DIR)"; return 1; }
	while read -r kind id pid st b; do
		f0=$FAIL
		ok "$kind $id: still live with its own holder" live "$id" "$pid" "$st"
		ok "$kind $id: nothing of it was killed" not_killed "$id"
		[ "$kind" = work ] && ok "$kind $id: still working (heartbeat past $b)" moving "$id" "$b"
		[ "$FAIL" = "$f0" ] || explain "$id" "$pid" "$st" "$b"
	done <"$DIR/start"
	ok "a fresh state directory names none of its leases" unnamed_by_fresh
	ok "its own reconcile: no orphan, no lost holder" own_clean
	# They end as asked.
	while read -r kind id _; do
		if [ "$kind" = ask ]; then
			c send "$id" 'y\r' >/dev/null 2>&1
			f0=$FAIL
			ok "ask $id: answered, ends with a result" ended "$id" result_ready
			[ "$FAIL" = "$f0" ] || explain "$id" - - -
		else
			c cancel "$id" >/dev/null 2>&1
			ok "work $id: ends cancelled" ended "$id" cancelled
		fi
	done <"$DIR/start"
	while read -r _ id _; do
		c reject "$id" >/dev/null 2>&1
		c gc "$id" >/dev/null 2>&1
		ok "$id: removed, no uid slot left" bash -c \
		    "! grep -qlx '$id' /run/corral/uids/slot-*/owner 2>/dev/null"
	done <"$DIR/start"
	grep -F " $DIR/" /proc/self/mountinfo | awk '{print $5}' | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null; done
	rm -rf "$DIR"
	echo "tenant: $PASS passed, $FAIL failed"
	[ "$FAIL" -eq 0 ]
}

"$cmd"
