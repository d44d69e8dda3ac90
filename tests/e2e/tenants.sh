#!/usr/bin/env bash
# tenants.sh: two corral state directories on one host (issue 15 items 7
# and 8, SPEC 9.2), with real sandboxed (bwrap) leases, judged from the
# host. State A runs an agent that keeps working and a lease whose check
# is still running; state B, a brand-new one, reconciles twice, tries `gc`
# on A's IDs and runs a lease of its own to the end. Nothing of A's is
# listed by B, nothing of A's is signalled or freed by B's cleanup, and
# both come out intact: A's agent still working, A's check finished and
# passed, each state directory's cgroups under its own tag, neither one's
# branches or review worktrees in the repository both use listed by the
# other.
set -u
. "$(dirname "$0")/lib.bash"

needs_root
A=$CORRAL_STATE_DIR
B=$TMP/state-b
REPO=$TMP/repo
new_repo "$REPO"
echo base >"$REPO/README"
git -C "$REPO" add -A && git -C "$REPO" commit -qm base
mkdir -p "$XDG_CONFIG_HOME/corral"
printf '[limits]\nwall_time = 120s\nmemory = 256M\npids = 128\n' \
	>"$XDG_CONFIG_HOME/corral/policy.ini"
# A check that runs long enough for B to look at it (SPEC 7.3).
printf '[checks]\nslow = sleep 12; test -s out.txt\n' >"$TMP/slow.ini"
in_a() { (cd "$REPO" && CORRAL_STATE_DIR=$A "$CORRAL" "$@"); }
in_b() { (cd "$REPO" && CORRAL_STATE_DIR=$B "$CORRAL" "$@"); }
js_a() { in_a show "$1" --json; }
js_b() { in_b show "$1" --json; }
# uid_of ID: the uid of the slot whose owner is ID (any state directory's)
uid_of() {
	local f
	f=$(grep -lx "$1" /run/corral/uids/slot-*/owner 2>/dev/null | head -1)
	[ -n "$f" ] || return 1
	f=${f%/owner}
	echo $((2000000 + ${f##*/slot-}))
}
# procs_of UID: "PID START" of each process running as UID now (a zombie
# runs nothing: the agent's last one may outlive its slot's release)
procs_of() {
	local p
	for p in $(pgrep -U "$1"); do
		pid_gone "$p" "$(pid_start "$p")" || echo "$p $(pid_start "$p")"
	done
}
alive() { [ -n "$1" ] && ! all_gone "$1"; }

# --- A: a working agent, and a lease in its checks ---------------------------------
WORKER=$(in_a new --sandbox bwrap --name worker -- /bin/sh -c \
	'i=0; while :; do i=$((i+1)); echo "beat $i"; echo $i >/work/beats; sleep 0.2; done')
check "A: the worker starts" valid_id "$WORKER"
check "A: the worker is working" wait_screen "$WORKER" "beat 3" 30
CHECKED=$(in_a new --sandbox bwrap --name checked --policy "$TMP/slow.ini" -- \
	/bin/sh -c 'echo result >out.txt')
check "A: the checked lease starts" valid_id "$CHECKED"
wuid=$(uid_of "$WORKER")
check "A: the worker runs under a uid slot of its own" test -n "$wuid"
wprocs=$(procs_of "$wuid")
check "A: the worker's processes are seen from the host" test -n "$wprocs"
# The check runs under a slot of its own run ID ("ID.<ms>.<n>", journaled
# under the lease), once the agent has ended.
cprocs=
agent_down() { # ID: the agent's own sandbox (its uid slot) is torn down
	js_a "$1" | jq -e '[.resources[] | select(.kind=="sandbox" and
	    .state!="removed" and (.identity | startswith("check:") | not))] |
	    length == 0' >/dev/null
}
check_uid_of() { # ID: the uid of the slot a check run of lease ID owns
	local f
	f=$(grep -l "^$1\.[0-9]*\.[0-9]*\$" /run/corral/uids/slot-*/owner \
	    2>/dev/null | head -1)
	[ -n "$f" ] || return 1
	f=${f%/owner}
	echo $((2000000 + ${f##*/slot-}))
}
for _ in $(seq 300); do
	agent_down "$CHECKED" && cuid=$(check_uid_of "$CHECKED") &&
	    cprocs=$(procs_of "$cuid") && [ -n "$cprocs" ] && break
	sleep 0.1
done
check "A: the check runs (its processes seen from the host)" test -n "$cprocs"

# --- B: a brand-new state directory reconciles twice, then tries gc ---------------
out1=$(in_b reconcile --json 2>&1); rc1=$?
out2=$(in_b reconcile --json 2>&1); rc2=$?
check "B: reconcile runs (exit $rc1, $rc2)" test "$rc1$rc2" = 00
for id in "$WORKER" "$CHECKED"; do
	check "B: reconcile never lists A's $id" bash -c \
		"! grep -qF '$id' <<<'$out1$out2'"
	out=$(in_b gc "$id" 2>&1); rc=$?
	check "B: gc $id is refused (exit $rc): nothing of B's by that ID" \
		test "$rc" -ne 0
done
check "B: no orphan at all in a fresh state directory" \
	jq_eq "$out2" '[.findings[]? | select(.kind == "orphan")] | length' 0
check "A: the check was not signalled by B" alive "$cprocs"
check "A: the worker was not signalled by B" alive "$wprocs"

# --- B: a lease of its own, run to the end and torn down -------------------------------
OWN=$(in_b new --sandbox bwrap --name own -- /bin/sh -c 'echo mine >mine.txt')
check "B: its own lease starts" valid_id "$OWN"
in_b wait "$OWN" --until result_ready,failed,cancelled --timeout 60 >/dev/null 2>&1
for _ in $(seq 150); do
	[ "$(js_b "$OWN" | jq '[.resources[] | select((.kind=="cgroup" or
	    .kind=="sandbox") and .state!="removed")] | length')" = 0 ] && break
	sleep 0.2
done
check "B: its lease ended with a result" jq_eq "$(js_b "$OWN")" .lease_state result_ready
check "B: its sandbox is torn down" jq_eq "$(js_b "$OWN")" '[.resources[] |
	select((.kind=="cgroup" or .kind=="sandbox") and .state!="removed")] | length' 0
check "A: the worker survived B's teardown" alive "$wprocs"
tag_a=$(js_a "$WORKER" | jq -r '.resources[] | select(.kind=="cgroup") | .identity' |
	grep -o 'corral/state-[0-9a-f]*' | sort -u)
tag_b=$(js_b "$OWN" | jq -r '.resources[] | select(.kind=="cgroup") | .identity' |
	grep -o 'corral/state-[0-9a-f]*' | sort -u)
check "each state directory's cgroups sit under its own tag" \
	bash -c "[ -n '$tag_a' ] && [ -n '$tag_b' ] && [ '$tag_a' != '$tag_b' ]"
check "a uid slot carries its state directory" bash -c \
	"grep -qx '$(realpath "$A")' \"\$(dirname \"\$(grep -lx '$WORKER' /run/corral/uids/slot-*/owner)\")/scope\""

# --- A comes out intact ---------------------------------------------------------------
in_a wait "$CHECKED" --until result_ready,failed,cancelled --timeout 90 >/dev/null 2>&1
# The holder records the checks, then exits.
for _ in $(seq 450); do
	CORRAL_STATE_DIR=$A holder_gone "$CHECKED" && break
	sleep 0.2
done
j=$(js_a "$CHECKED")
check "A: the checked lease ends result_ready" jq_eq "$j" .lease_state result_ready
check "A: its check ran to the end and passed" jq_eq "$j" \
	'[.result.checks[]? | select(.name == "slow") | .status][0]' pass
check "A: the worker is still working" bash -c \
	"b=\$(cat '$A/leases/$WORKER/work/beats'); sleep 0.6; [ \"\$(cat '$A/leases/$WORKER/work/beats')\" -gt \"\$b\" ]"
out=$(in_a reconcile --json 2>&1)
check "A: its own reconcile lists nothing of B's (sandbox, branch, worktree on the shared repository)" \
	jq_eq "$out" '[.findings[]? | select(.kind == "orphan")] | length' 0
in_a cancel "$WORKER" >/dev/null 2>&1
in_a wait "$WORKER" --until cancelled,failed --timeout 30 >/dev/null 2>&1
check "A: the worker ends as asked (cancelled)" jq_eq "$(js_a "$WORKER")" .lease_state cancelled
finish
