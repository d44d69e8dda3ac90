# lib.bash: helpers for the shell end-to-end tests: a private state directory,
# checks that count and name failures, waits with deadlines (never a bare
# sleep standing in for a result), and cleanup of every holder started.
# Each test ends with `finish`, which prints "N passed, N failed".
CORRAL=${CORRAL_BIN:?CORRAL_BIN must name the corral binary}
CORRAL_FIXTURES=${CORRAL_FIXTURES:?}
TMP=$(mktemp -d "${TMPDIR:-/tmp}"/corral-e2e.XXXXXX)
export CORRAL_STATE_DIR="$TMP/state"
export XDG_CONFIG_HOME="$TMP/config"
PASS=0
FAIL=0

command -v jq >/dev/null || { echo "jq is required (scripts/packages.txt)"; exit 1; }

cleanup() {
	# Stop every holder of this test's state directory, by the PID its
	# journal records, and give each a deadline to finish its teardown.
	local s id pid p pids=() alive v
	for s in "$CORRAL_STATE_DIR"/leases/*/holder.sock; do
		[ -S "$s" ] || continue
		id=$(basename "$(dirname "$s")")
		pid=$("$CORRAL" show "$id" --json 2>/dev/null | jq -r '.holder_pid // empty')
		[ -n "$pid" ] || continue
		kill -CONT "$pid" 2>/dev/null && kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
	done
	for _ in $(seq 100); do
		alive=0
		for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ "$alive" = 0 ] && break
		sleep 0.1
	done
	# Whatever still runs with this state directory in its environment (a
	# holder, a hook, a command of the test's), never this shell: by the
	# environment, not by a command line another process could share.
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		[ "$p" = $$ ] || [ "$p" = "$BASHPID" ] && continue
		v=()
		mapfile -d '' v 2>/dev/null <"/proc/$p/environ" || continue
		for s in "${v[@]}"; do
			[ "$s" = "CORRAL_STATE_DIR=$CORRAL_STATE_DIR" ] && { kill -9 "$p" 2>/dev/null; break; }
		done
	done
	# What the lost holders leave (a test's SIGKILLed one, or one killed
	# just above): reconcile tears down their cgroups and sandboxes as an
	# operator's next command would (SPEC 9.2), before the state goes.
	[ -e "$CORRAL_STATE_DIR/corral.db" ] &&
	    timeout 120 "$CORRAL" reconcile >/dev/null 2>&1
	# Sandboxed leases keep their bounded workspace mounted (SPEC 9.2).
	grep -F " $TMP/" /proc/self/mountinfo | awk '{print $5}' | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT

pass() { PASS=$((PASS + 1)); echo "ok - $1"; }
fail() { FAIL=$((FAIL + 1)); echo "FAIL - $1"; }

# check NAME CMD...: run CMD, pass if it exits 0.
check() {
	local name=$1; shift
	if "$@" >/dev/null 2>&1; then pass "$name"; else fail "$name"; fi
}

# checkd NAME DIAG CMD...: check, and when it fails the output of the
# shell command DIAG goes to the log ("# " lines), to tell why
checkd() {
	local name=$1 diag=$2; shift 2
	if "$@" >/dev/null 2>&1; then pass "$name"; else
		fail "$name"
		eval "$diag" 2>&1 | head -c 4000 | sed 's/^/# /'
	fi
}

# expect_rc RC NAME CMD...
expect_rc() {
	local want=$1 name=$2; shift 2
	"$@" >/dev/null 2>&1
	local rc=$?
	if [ "$rc" -eq "$want" ]; then pass "$name (exit $rc)"; else fail "$name (exit $rc, want $want)"; fi
}

# needs_root WHY: these tests drive real sandboxes; as another user they fail
needs_root() {
	[ "$(id -u)" = 0 ] || { echo "$(basename "$0") needs root${1:+ ($1)}"; exit 1; }
}

# new_repo DIR: an empty git repository on branch main with an identity
new_repo() {
	git init -q -b main "$1" &&
	    git -C "$1" config user.email op@example.invalid &&
	    git -C "$1" config user.name Op
}

valid_id() { [[ "$1" =~ ^[0-9]{8}-[0-9]{6}-[0-9]{3}-[0-9a-f]{4}$ ]]; }

# jq_eq JSON FILTER WANT
jq_eq() { [ "$(echo "$1" | jq -r "$2")" = "$3" ]; }

# poll CMD...: until CMD succeeds, at most 30 s (a deadline, never a bare
# sleep standing in for a result)
poll() {
	local i
	for i in $(seq 150); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}

# wait_screen ID TEXT [SECONDS]: poll `corral screen` until TEXT shows.
wait_screen() {
	local id=$1 text=$2 secs=${3:-10} i
	for i in $(seq $((secs * 20))); do
		"$CORRAL" screen "$id" 2>/dev/null | grep -qF -- "$text" && return 0
		sleep 0.05
	done
	return 1
}

# Processes are found by the PID the test started or the journal records,
# never by a command line (another process may match it, SPEC 9.2).
# pid_gone PID START: the process PID that started at START (field 22 of
# /proc/PID/stat) has exited: no such PID, a zombie, or another process.
pid_gone() {
	local st f
	st=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	read -r -a f <<<"${st##*) }"
	[ "${f[0]}" = Z ] || [ "${f[0]}" = X ] || [ "${f[19]}" != "$2" ]
}
# pid_start PID: its start time (for pid_gone); fails if it is gone
pid_start() {
	local st f
	st=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	read -r -a f <<<"${st##*) }"
	echo "${f[19]}"
}
# holder_gone ID: the lease's holder (the PID and start time of its
# holder_started receipt) has exited; false if it never started
holder_gone() {
	local pid start
	read -r pid start < <("$CORRAL" show "$1" --json 2>/dev/null | jq -r '[.receipts[] |
	    select(.kind == "holder_started")][-1].fields // {} |
	    "\(.holder_pid // "") \(.holder_start // "")"')
	[ -n "$pid" ] && [ -n "$start" ] && pid_gone "$pid" "$start"
}
# proc_tree PID: PID and its descendants now, "PID START" a line (for
# all_gone)
proc_tree() {
	local c
	echo "$1 $(pid_start "$1")"
	for c in $(pgrep -P "$1"); do proc_tree "$c"; done
}
# all_gone LINES: every process of proc_tree's LINES has exited
all_gone() {
	local p st
	while read -r p st; do
		[ -z "$p" ] || pid_gone "$p" "$st" || return 1
	done <<<"$1"
}
# holding FILE: the PIDs of the processes that have FILE open
holding() {
	find /proc/[0-9]*/fd -maxdepth 1 -lname "$1" 2>/dev/null | cut -d/ -f3 | sort -u
}

finish() {
	echo "$PASS passed, $FAIL failed"
	[ "$FAIL" -eq 0 ]
}
