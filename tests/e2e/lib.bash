# lib.bash: helpers for the shell end-to-end tests: a private state directory,
# checks that count and name failures, waits with deadlines (never a bare
# sleep standing in for a result), and cleanup of every holder started.
# Each test ends with `finish`, which prints "N passed, N failed".
CORRAL=${CORRAL_BIN:?CORRAL_BIN must name the corral binary}
CORRAL_FIXTURES=${CORRAL_FIXTURES:?}
TMP=$(mktemp -d /tmp/corral-e2e.XXXXXX)
export CORRAL_STATE_DIR="$TMP/state"
export XDG_CONFIG_HOME="$TMP/config"
PASS=0
FAIL=0

command -v jq >/dev/null || { echo "jq is required (scripts/packages.txt)"; exit 1; }

cleanup() {
	# Stop every holder of this test's state directory.
	for s in "$CORRAL_STATE_DIR"/leases/*/holder.sock; do
		[ -S "$s" ] || continue
		id=$(basename "$(dirname "$s")")
		pid=$(pgrep -f "__holder --id $id" | head -1)
		[ -n "$pid" ] && kill -CONT "$pid" 2>/dev/null && kill -TERM "$pid" 2>/dev/null
	done
	sleep 0.5
	pkill -9 -f "$CORRAL_STATE_DIR" 2>/dev/null
	for p in $(pgrep -f "__holder"); do
		tr '\0' '\n' </proc/$p/environ 2>/dev/null | grep -qx "CORRAL_STATE_DIR=$CORRAL_STATE_DIR" &&
			kill -9 "$p" 2>/dev/null
	done
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

# expect_rc RC NAME CMD...
expect_rc() {
	local want=$1 name=$2; shift 2
	"$@" >/dev/null 2>&1
	local rc=$?
	if [ "$rc" -eq "$want" ]; then pass "$name (exit $rc)"; else fail "$name (exit $rc, want $want)"; fi
}

valid_id() { [[ "$1" =~ ^[0-9]{8}-[0-9]{6}-[0-9]{3}-[0-9a-f]{4}$ ]]; }

# jq_eq JSON FILTER WANT
jq_eq() { [ "$(echo "$1" | jq -r "$2")" = "$3" ]; }

# wait_screen ID TEXT [SECONDS]: poll `corral screen` until TEXT shows.
wait_screen() {
	local id=$1 text=$2 secs=${3:-10} i
	for i in $(seq $((secs * 20))); do
		"$CORRAL" screen "$id" 2>/dev/null | grep -qF -- "$text" && return 0
		sleep 0.05
	done
	return 1
}

finish() {
	echo "$PASS passed, $FAIL failed"
	[ "$FAIL" -eq 0 ]
}
