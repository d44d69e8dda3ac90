#!/usr/bin/env bash
# apply_crash.sh: `corral apply` SIGKILLed while it re-runs the declared
# checks (issue 15; SPEC 7.3, 9.2): the target advanced, so apply verifies
# the patch on top of it and runs the checks again, each in an exec zone of
# its own with its copy in a bounded image. Killed while a check runs, it
# leaves the copy mounted, the check's cgroups and its uid slot claimed; `corral reconcile` must stop and remove all of it by the
# journal's rows (the check run's copy included), and the lease stays
# result_ready; reject and gc then end it with nothing left.
set -u
. "$(dirname "$0")/lib.bash"

needs_root
REPO=$TMP/app
new_repo "$REPO"
mkdir -p "$REPO/t"
# Fast on the lease's result; slow once the target's new file is in the tree.
S=$((8000000 + $$ % 100000))
printf '[ -e advanced ] && exec sleep %s\necho quick\n' "$S" >"$REPO/t/slow.sh"
git -C "$REPO" add -A && git -C "$REPO" commit -qm base
mkdir -p "$XDG_CONFIG_HOME/corral"
cat >"$XDG_CONFIG_HOME/corral/policy.ini" <<'EOF'
[limits]
wall_time = 300s
memory = 256M
disk = 64M
inodes = 8192
[checks]
timeout = 120s
slow = sh t/slow.sh
EOF
js() { "$CORRAL" show "$1" --json; }
sleeping() { # a host process whose command line is exactly "sleep N"
	local p
	for p in /proc/[0-9]*; do
		[ "$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)" = "sleep $1 " ] && return 0
	done
	return 1
}
copy_mounted() { grep -qF " $CORRAL_STATE_DIR/leases/$1/result/checks/" /proc/self/mountinfo; }
check_cgroups() { # the check runs' cgroups of lease $1 on the host
	find /sys/fs/cgroup -maxdepth 8 -type d -name "lease-$1.*" 2>/dev/null
}
check_slots() { grep -l "^$1\." /run/corral/uids/slot-*/owner 2>/dev/null; }

ID=$(cd "$REPO" && "$CORRAL" new --sandbox bwrap --name kept -- /bin/sh -c 'echo done >out.txt')
check "the lease starts" valid_id "$ID"
"$CORRAL" wait "$ID" --until result_ready,failed,cancelled --timeout 150 >/dev/null 2>&1
poll holder_gone "$ID"
check "its result is ready, its check passed" jq_eq "$(js "$ID")" \
	'"\(.lease_state) \(.result.checks[0].status)"' "result_ready pass"
"$CORRAL" review "$ID" >/dev/null 2>&1
# The target advances: apply must verify and check the patch on top of it.
echo x >"$REPO/advanced"
git -C "$REPO" add -A && git -C "$REPO" commit -qm advanced
git -C "$REPO" branch -q release
"$CORRAL" apply "$ID" --into release >"$TMP/apply.out" 2>&1 &
APPLY=$!
check "apply re-runs the check on top of the advanced target" poll sleeping "$S"
check "... in a bounded copy, mounted" copy_mounted "$ID"
kill -KILL "$APPLY"
wait "$APPLY" 2>/dev/null
check "killed mid-check: the copy is still mounted" copy_mounted "$ID"

out=$("$CORRAL" reconcile 2>&1); rc=$?
echo "# reconcile: $out"
check "reconcile succeeds (exit $rc)" test "$rc" -eq 0
check "reconcile unmounts the check's copy" bash -c "! grep -qF ' $CORRAL_STATE_DIR/leases/$ID/result/checks/' /proc/self/mountinfo"
check "... and removes it and its image" test -z "$(ls -A "$CORRAL_STATE_DIR/leases/$ID/result/checks" 2>/dev/null)"
check "... stops the check" bash -c "! { $(declare -f sleeping); sleeping $S; }"
check "... removes its cgroups" test -z "$(check_cgroups "$ID")"
check "... and gives its uid slot back" test -z "$(check_slots "$ID")"
j=$(js "$ID")
check "the journal holds no check run resource unremoved" jq_eq "$j" \
	'[.resources[] | select((.identity | startswith("check:")) and .state != "removed")] | length' 0
check "the lease is still result_ready" jq_eq "$j" .lease_state result_ready
out=$("$CORRAL" reject "$ID" 2>&1); rc=$?
check "reject then succeeds (exit $rc)" test "$rc" -eq 0
check "... its cleanup confirmed" jq_eq "$(js "$ID")" .cleanup confirmed
out=$("$CORRAL" gc "$ID" 2>&1); rc=$?
check "gc removes the lease (exit $rc)" test "$rc" -eq 0
check "... its directory is gone" test ! -e "$CORRAL_STATE_DIR/leases/$ID"
finish
