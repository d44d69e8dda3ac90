#!/usr/bin/env bash
# test.sh: `make test`. Runs every stage even when an earlier one fails --
# the suites (unit, end-to-end, acceptance, adversarial), the same suites
# under AddressSanitizer and UndefinedBehaviorSanitizer, the fuzz targets
# -- then checks that no test left anything running on the host (a tmux
# server, a lease holder, a cgroup, a mount, a loop device) and that a
# second state directory's leases, live beside the suites all along, came
# out intact (scripts/second-tenant.sh), prints one summary line per
# stage, and ends with a plain "N passed, N failed".
#
#   scripts/test.sh [STAGE...]   stages: suites adversarial asan fuzz
#                                (default: all four)
#
# BUILD, ASAN, FUZZ (build directories), JOBS, FUZZ_RUNS and
# CORRAL_TEST_TIMEOUT (seconds per test, default 600) come from make.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build} ASAN=${ASAN:-build-asan} FUZZ=${FUZZ:-build-fuzz}
JOBS=${JOBS:-$(nproc)} FUZZ_RUNS=${FUZZ_RUNS:-20000}
LOGDIR=${TEST_LOGDIR:-$BUILD/test-logs}
mkdir -p "$LOGDIR"

# No test may reach an interactive pager, editor or credential prompt: a
# fresh machine's git falls back to `more`, which waits forever.
export GIT_PAGER=cat PAGER=cat MANPAGER=cat EDITOR=false VISUAL=false \
	GIT_EDITOR=false GIT_TERMINAL_PROMPT=0 GIT_ASKPASS=false SSH_ASKPASS=false

stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(suites adversarial asan fuzz)

# ---- a second tenant: another state directory's live leases, working beside
# the suites; at the end they must be intact (scripts/second-tenant.sh) ----
TENANT=
if [[ " ${stages[*]} " =~ \ (suites|adversarial)\  ]]; then
	TENANT=$(mktemp -d /var/tmp/corral-tenant.XXXXXX)	# disk-backed, as RUN_TMP
	make --no-print-directory build >"$LOGDIR/tenant.build.log" 2>&1 &&
	    scripts/second-tenant.sh start "$TENANT" 2>&1 | tee "$LOGDIR/tenant.log"
	# an interrupted run does not leave the tenant's agents working for ever
	trap 'scripts/second-tenant.sh stop "$TENANT" >/dev/null 2>&1; exit 130' INT TERM HUP
fi

# ---- what the host runs before: anything new after the run is a leftover ----
# Lease holders (`corral-holder`), tmux servers, lease cgroups, mounts
# and loop devices. Only this run's count: other corral runs, a second
# tenant or an operator may share the host. This run's processes carry
# CORRAL_TEST_RUN in their environment; every test makes its files under
# its own TMPDIR, so its state directories, mounts and loop images are
# under RUN_TMP; a lease's cgroups sit under state-<tag>, the tag naming
# the state directory that owns them.
export CORRAL_TEST_RUN="$$.$(date +%s%N)"
# Under /var/tmp, disk-backed on Debian: /tmp may be a tmpfs in RAM, too
# small for the workspace images of the leases the suites run at once
# (corral refuses a lease whose image the free space cannot cover).
RUN_TMP=$(mktemp -d /var/tmp/corral-run.XXXXXX)
chmod 1777 "$RUN_TMP"	# as /tmp: a sandbox uid reaches what a test shares
export TMPDIR=$RUN_TMP
. scripts/leftovers.bash
snapshot >"$LOGDIR/host.before"

declare -A RESULT PASSED FAILED SECS
TOTAL_PASS=0
TOTAL_FAIL=0

# ctest_stage NAME BUILDDIR [ctest args]: counts from ctest's own summary.
ctest_stage() {
	local name=$1 dir=$2 log=$LOGDIR/$1.log
	shift 2
	# (-V streams a test's own lines, "NN: " in front: shown without it)
	(cd "$dir" && ctest --output-on-failure -j "$JOBS" \
	    --timeout "${CORRAL_TEST_TIMEOUT:-600}" "$@") 2>&1 |
	    sed -u 's/^[0-9][0-9]*: //' | tee "$log"
	local total failed
	total=$(sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p' "$log" | tail -1)
	failed=$(sed -n 's/.* \([0-9]*\) tests failed out of.*/\1/p' "$log" | tail -1)
	if [ -z "$total" ]; then
		PASSED[$name]=0 FAILED[$name]=1
		RESULT[$name]="ctest ran no test"
		return
	fi
	PASSED[$name]=$((total - failed)) FAILED[$name]=$failed
	RESULT[$name]=$(grep -E '^[[:space:]]+[0-9]+ - ' "$log" |
	    sed 's/^[[:space:]]*[0-9]* - //' | tr '\n' ' ')
}

# built TARGET STAGE: make TARGET, or the stage fails as "build failed".
built() {
	make --no-print-directory "$1" >"$LOGDIR/$2.build.log" 2>&1 && return
	tail -n 40 "$LOGDIR/$2.build.log"
	PASSED[$2]=0 FAILED[$2]=1 RESULT[$2]="build failed"
	return 1
}

run_stage() {
	local name=$1 t0=$SECONDS
	echo "==== make test: stage $name"
	case $name in
	suites)
		built build "$name" &&
		    ctest_stage suites "$BUILD" -E '^adversarial/' ;;
	adversarial)
		# Its own stage, so its line per probe shows as each ends.
		built build "$name" &&
		    ctest_stage adversarial "$BUILD" -R '^adversarial/' -V ;;
	asan)
		# The unit suites: the shell-driven ones (e2e/, and agents/
		# with its real CLIs and their npm install) run in suites.
		built asan "$name" &&
		    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		    ctest_stage asan "$ASAN" -E '^(e2e|agents)/' ;;
	fuzz)
		built fuzz-build "$name" || { SECS[$name]=$((SECONDS - t0)); return; }
		sh scripts/fuzz.sh "$FUZZ" "$FUZZ_RUNS" 2>&1 | tee "$LOGDIR/$name.log"
		PASSED[$name]=$(sed -n 's/^fuzz: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$LOGDIR/$name.log")
		FAILED[$name]=$(sed -n 's/^fuzz: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$LOGDIR/$name.log")
		: "${PASSED[$name]:=0}"
		[ -n "${FAILED[$name]}" ] || FAILED[$name]=1
		RESULT[$name]=$(sed -n 's/^fuzz: \(.*\) FAILED$/\1/p' "$LOGDIR/$name.log" | tr '\n' ' ') ;;
	*)
		echo "make test: unknown stage '$name' (stages: suites adversarial asan fuzz)" >&2
		PASSED[$name]=0 FAILED[$name]=1 RESULT[$name]="unknown stage" ;;
	esac
	SECS[$name]=$((SECONDS - t0))
}

for s in "${stages[@]}"; do run_stage "$s"; done

# ---- leftovers: the run must leave the host as it found it ----------------------
# A holder may still be finishing its teardown when the last test ends:
# give what is new a deadline to go before calling it a leftover.
left=
for _ in $(seq 60); do
	left=$(new_leftovers)
	[ -z "$left" ] && break
	sleep 0.5
done
if [ -n "$left" ]; then
	echo "==== make test: left running on the host after the tests:"
	echo "$left" | sed 's/^/  /'
	PASSED[leftovers]=0 FAILED[leftovers]=1
	RESULT[leftovers]="$(echo "$left" | wc -l) leftover(s)"
	echo "  (kept for a look: $RUN_TMP)"
else
	PASSED[leftovers]=1 FAILED[leftovers]=0
	rm -rf --one-file-system "$RUN_TMP"
fi
SECS[leftovers]=0
stages+=(leftovers)
if [ -n "$TENANT" ]; then
	scripts/second-tenant.sh stop "$TENANT" 2>&1 | tee -a "$LOGDIR/tenant.log"
	PASSED[tenant]=$(sed -n 's/^tenant: \([0-9]*\) passed.*/\1/p' "$LOGDIR/tenant.log")
	FAILED[tenant]=$(sed -n 's/^tenant: [0-9]* passed, \([0-9]*\) failed$/\1/p' "$LOGDIR/tenant.log")
	: "${PASSED[tenant]:=0}"
	[ -n "${FAILED[tenant]}" ] || FAILED[tenant]=1
	RESULT[tenant]=$(sed -n 's/^tenant: FAIL - //p' "$LOGDIR/tenant.log" | tr '\n' ';')
	SECS[tenant]=0
	stages+=(tenant)
fi

echo "==== make test: summary"
for s in "${stages[@]}"; do
	p=${PASSED[$s]} f=${FAILED[$s]}
	TOTAL_PASS=$((TOTAL_PASS + p)) TOTAL_FAIL=$((TOTAL_FAIL + f))
	if [ "$f" -eq 0 ]; then v=ok; else v=FAILED; fi
	printf '%-10s %-6s %4d passed, %d failed  %3dm%02ds  %s\n' "$s" "$v" \
	    "$p" "$f" $((SECS[$s] / 60)) $((SECS[$s] % 60)) "${RESULT[$s]:-}"
done
echo "logs: $LOGDIR"
echo "$TOTAL_PASS passed, $TOTAL_FAIL failed"
[ "$TOTAL_FAIL" -eq 0 ]
