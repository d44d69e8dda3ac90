#!/bin/sh
# bench/run.sh BUILD_DIR: `make bench` (issue 2 item 5). Runs the bench
# programs of BUILD_DIR/bench against a private tmux 3.3a server on this
# machine (detached, status off, history-limit 2000, 200x50 panes), then
# prints every figure side by side with its ratio, target and MET or
# MISSED, and "N met, M missed". A miss is reported, never hidden; the
# exit status is non-zero only when a bench could not run.
# BENCH_ONLY="ingest load echo detect" runs a subset (detect: lifecycle
# detection latency and idle cost, issue 4, bench_detect.c). echo also
# times the keystroke round trip through the console (issue 3 item 7):
# the real BUILD_DIR/tui/corral attached in a PTY, against tmux's client.
# lease: a sandboxed lease's start (issue 6, bench_lease_start.c), from
# `corral new` to the agent's first byte, next to bare bwrap and git clone.
# scale: leases on a generated repository of 50,000 commits over 5,000
# files (issue 17, bench_scale.c), kept in BUILD_DIR/bench/cache once made,
# next to git worktree add and git clone --depth 1.
set -eu

BUILD=${1:-build}
B=$BUILD/bench
ONLY=${BENCH_ONLY:-ingest load echo detect lease scale}
SIZE=$((64 * 1024 * 1024))

for p in bench_gen bench_agent bench_holder bench_ingest bench_load \
    bench_echo bench_detect bench_lease_start bench_repo bench_scale; do
	if [ ! -x "$B/$p" ]; then
		echo "bench: $B/$p is missing (build first: make build)" >&2
		exit 1
	fi
done
if [ ! -x "$BUILD/tui/corral" ]; then
	echo "bench: $BUILD/tui/corral is missing (build first: make build)" >&2
	exit 1
fi
if ! command -v tmux >/dev/null 2>&1; then
	echo "bench: tmux is not installed (scripts/packages.txt)" >&2
	exit 1
fi

TMP=$(mktemp -d /tmp/corral-bench.XXXXXX)
PIDS=""

# Whatever a failed bench left: its tmux servers (named after its pid) and
# every process still working in our temporary directory (holders, agents).
cleanup() {
	for pid in $PIDS; do
		for s in /tmp/tmux-"$(id -u)"/corral-bench-"$pid"-*; do
			[ -S "$s" ] || continue
			tmux -L "$(basename "$s")" kill-server 2>/dev/null || :
			rm -f "$s"
		done
	done
	for d in /proc/[0-9]*; do
		cwd=$(readlink "$d/cwd" 2>/dev/null) || continue
		case $cwd in
		"$TMP"/*) kill -TERM "${d#/proc/}" 2>/dev/null || : ;;
		esac
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

export BENCH_RESULTS="$TMP/results.tsv"
: >"$BENCH_RESULTS"

run() {
	"$@" &
	pid=$!
	PIDS="$PIDS $pid"
	wait "$pid"
}

echo "corral bench against $(tmux -V) on $(uname -srm), $(nproc) cores"
echo "build: $BUILD   started: $(date -u '+%Y-%m-%d %H:%M:%S UTC')   load" \
    "average: $(cut -d' ' -f1-3 /proc/loadavg)"
case $(tmux -V) in
"tmux 3.3a") ;;
*) echo "note: the targets were set against tmux 3.3a" ;;
esac
echo

START=$(date +%s)
for what in $ONLY; do
	t0=$(date +%s)
	case $what in
	ingest)
		"$B/bench_gen" agent "$TMP/agent.out" "$SIZE"
		"$B/bench_gen" plain "$TMP/plain.out" "$SIZE"
		run "$B/bench_ingest" "$TMP" "$TMP/agent.out" \
		    "$TMP/plain.out" 3
		rm -f "$TMP/agent.out" "$TMP/plain.out"
		;;
	load) run "$B/bench_load" "$TMP" ;;
	echo) run "$B/bench_echo" "$TMP" 500 ;;
	detect) run "$B/bench_detect" "$TMP" ;;
	# lease: sandboxed lease start (issue 6), bench_lease_start.c
	lease) run "$B/bench_lease_start" "$TMP" 7 ;;
	# scale: a large repository (issue 17), bench_scale.c
	scale)
		mkdir -p "$B/cache"
		run "$B/bench_scale" "$TMP" "$B/cache" 3
		;;
	*) echo "bench: unknown part '$what'" >&2; exit 2 ;;
	esac
	echo "($what: $(($(date +%s) - t0)) s)"
	echo
done

echo "summary after $(($(date +%s) - START)) s (load average now:" \
    "$(cut -d' ' -f1-3 /proc/loadavg))"
awk -F'\t' '
BEGIN {
	printf "%-38s %9s %9s %-7s %-7s %-15s %-13s %s\n", "figure",
	    "corral", "tmux", "unit", "ratio", "other", "target", "verdict"
}
{
	other = $7 == "" ? "" : $7 " " $8
	printf "%-38s %9s %9s %-7s %-7s %-15s %-13s %s\n", $2, $4, $5, $3,
	    $6, other, $9, $10
	if ($10 == "MET")
		met++
	else if ($10 == "MISSED") {
		missed++
		miss[missed] = $2 " (" $4 " " $3 " vs tmux " $5 ", target " \
		    $9 ")"
	}
}
END {
	printf "\n%d met, %d missed\n", met, missed
	for (i = 1; i <= missed; i++)
		printf "missed: %s\n", miss[i]
}' "$BENCH_RESULTS"
