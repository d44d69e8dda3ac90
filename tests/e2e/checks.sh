#!/usr/bin/env bash
# checks.sh: the exec zone bounded like the agent zone (issue 15, items 1-4;
# SPEC 7.3, 8.2, 8.4, 8.5, 9.2). A real sandboxed (bwrap) lease whose agent
# rewrites the scripts its declared checks run: one allocates 1 GB under
# memory = 256M, one writes 200 MiB under disk = 64M, one forks past
# pids = 64 and leaves its children running, one sleeps past
# [checks] timeout = 8s, one builds a tree 3,000 directories deep, and one
# prints the minted credential the agent stored base64-encoded. Judged from
# the host: each check fails with its limit's name, nothing of any check
# outlives it (no process, no cgroup, no uid slot, no copy in /run/corral,
# no mount), the lease's cleanup is not failed, and the credential is in
# no receipt, review, show --json or file of the state directory. A second
# lease is cancelled while its check runs: the check stops, the lease ends
# cancelled. A lease whose holder is SIGKILLed while its check runs, and
# an apply SIGKILLed while the checks of the commit it rebased run: after
# reconcile the check is stopped, its uid slot, cgroups and journal rows
# released, nothing pending (issue 16 item 4). Takes 30-90 s.
set -u
. "$(dirname "$0")/lib.bash"

needs_root
REPO=$TMP/app
new_repo "$REPO"
mkdir -p "$REPO/t" "$REPO/hostile"
# The checks the operator declared, innocent as committed...
for c in mem disk fork slow deep cred; do
	printf 'echo %s fine\n' "$c" >"$REPO/t/$c.sh"
done
# ...and what the agent puts in their place. Their sleeps last this run's
# own number of seconds, so the host-side look for them never sees another
# run's (two runs on one host shared 7318).
S1=$((7000000 + $$ % 100000 * 2)) S2=$((7000001 + $$ % 100000 * 2))
cat >"$REPO/hostile/mem.sh" <<'EOF'
python3 -c 'x = b"a" * (1 << 30); print("ALLOCATED", len(x))'
EOF
cat >"$REPO/hostile/disk.sh" <<'EOF'
head -c 200M /dev/zero >big; ls -l big; echo WROTE
EOF
cat >"$REPO/hostile/fork.sh" <<EOF
i=0; while [ \$i -lt 200 ]; do sleep $S1 & i=\$((i + 1)); done; echo FORKED; exit 0
EOF
cat >"$REPO/hostile/slow.sh" <<EOF
echo SLEEPING; exec sleep $S2
EOF
cat >"$REPO/hostile/deep.sh" <<'EOF'
python3 -c '
import os
for i in range(3000):
    os.mkdir("d"); os.chdir("d")
print("DEEP", i + 1)'
EOF
cat >"$REPO/hostile/cred.sh" <<'EOF'
echo "decoded: $(base64 -d .k)"
EOF
git -C "$REPO" add -A && git -C "$REPO" commit -qm base
mkdir -p "$XDG_CONFIG_HOME/corral"
cat >"$XDG_CONFIG_HOME/corral/policy.ini" <<'EOF'
[limits]
wall_time = 300s
memory = 256M
disk = 64M
inodes = 8192
pids = 64
[checks]
timeout = 8s
mem = sh t/mem.sh
disk = sh t/disk.sh
fork = sh t/fork.sh
slow = sh t/slow.sh
deep = sh t/deep.sh
cred = sh t/cred.sh
EOF
CANARY="corralcanary$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
printf '#!/bin/sh\necho "%s"\n' "$CANARY" >"$TMP/mint.sh"
printf '#!/bin/sh\ncat >/dev/null\n' >"$TMP/revoke.sh"
chmod +x "$TMP/mint.sh" "$TMP/revoke.sh"
cat >"$XDG_CONFIG_HOME/corral/credentials.ini" <<EOF
[credentials]
mint = $TMP/mint.sh
revoke = $TMP/revoke.sh
variable = ANTHROPIC_API_KEY
EOF
js() { "$CORRAL" show "$1" --json; }
# within SECS CMD...: until CMD succeeds, at most SECS seconds
within() {
	local i secs=$1; shift
	for i in $(seq $((secs * 5))); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}
# settled ID: its result and checks are recorded and its holder is gone.
settled() {
	"$CORRAL" wait "$1" --until result_ready,failed,cancelled --timeout 150 \
		>/dev/null 2>&1
	within 150 holder_gone "$1"
}
# detail ID CHECK: the recorded outcome of one check, "status detail"
outcome() {
	js "$1" | jq -r --arg c "$2" '.result.checks[] | select(.name == $c) |
	    "\(.status) \(.detail)"'
}
# a host process whose command line is exactly "sleep N"
sleeping() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)" = "sleep $1 " ] && return 0
	done
	return 1
}

T0=$(date +%s)
ID=$(cd "$REPO" && "$CORRAL" new --sandbox bwrap --name hostile -- /bin/sh -c \
	'cp hostile/*.sh t/ && printf %s "$ANTHROPIC_API_KEY" | base64 >.k')
check "the hostile lease starts" valid_id "$ID"
settled "$ID"
T1=$(date +%s)
J=$(js "$ID")
check "its result is ready (the agent exited 0)" jq_eq "$J" .lease_state result_ready
echo "# $(outcome "$ID" mem) / $(outcome "$ID" disk) / $(outcome "$ID" fork)"
echo "# $(outcome "$ID" slow) / $(outcome "$ID" deep) / $(outcome "$ID" cred)"
check "1 GB under memory = 256M: the check fails, limit memory" \
	test "$(outcome "$ID" mem)" = "fail limit: memory"
check "... it never allocated it" bash -c "! js $ID | jq -r '.receipts[] |
	select(.kind==\"check\" and .fields.name==\"mem\") | .fields.log' | grep -q ALLOCATED" 
check "200 MiB under disk = 64M: the check fails, limit disk" \
	test "$(outcome "$ID" disk)" = "fail limit: disk"
check "200 forks under pids = 64: the check fails, limit pids" \
	test "$(outcome "$ID" fork)" = "fail limit: pids"
check "... and none of its children survive it (host /proc)" bash -c \
	"$(declare -f sleeping); ! sleeping $S1"
check "sleep past [checks] timeout = 8s: the check fails, limit timeout" \
	test "$(outcome "$ID" slow)" = "fail limit: timeout"
check "... its sleep is gone (host /proc)" bash -c \
	"$(declare -f sleeping); ! sleeping $S2"
check "... the whole lease took far less than wall_time" test $((T1 - T0)) -lt 120
check "a tree 3,000 deep: the check passes, its copy removed" \
	jq_eq "$J" '[.receipts[] | select(.kind=="check" and .fields.name=="deep") |
	"\(.fields.status) \(.fields.copy_removed)"][0]' "pass true"
check "every check ran in cgroups, a uid slot and a copy of its own, journaled" \
	jq_eq "$J" '[.resources[] | select(.identity | startswith("check:")) |
	.kind] | unique | join(" ")' "cgroup sandbox workspace"
check "... each removed" jq_eq "$J" '[.resources[] |
	select(.state != "removed" and (.kind=="cgroup" or .kind=="sandbox" or
	(.identity | startswith("check:"))))] | length' 0
check "... no check cgroup is left on the host" bash -c \
	"! find /sys/fs/cgroup -maxdepth 6 -type d -name 'lease-$ID.*' | grep -q ."
check "... no uid slot names the lease or a check of it" bash -c \
	"! grep -rqs '^$ID' /run/corral/uids/*/owner"
check "... no copy of it in /run/corral" bash -c \
	"! find /run/corral -maxdepth 3 -name '$ID*' 2>/dev/null | grep -q ."
check "... no mount of a copy is left" bash -c \
	"! grep -q '$ID/result' /proc/self/mountinfo"
check "... the copies are gone from the lease directory" \
	test -z "$(ls -A "$CORRAL_STATE_DIR/leases/$ID/result/checks" 2>/dev/null)"
check "... the lease's cleanup is not failed" bash -c \
	"[ \"\$(js $ID | jq -r .cleanup)\" != failed ]"
check "the decoded credential is scrubbed from the check's log" jq_eq "$J" \
	'[.receipts[] | select(.kind=="check" and .fields.name=="cred") | .fields.log][0]' \
	"decoded: [REDACTED]"
out=$( { "$CORRAL" show "$ID"; js "$ID"; "$CORRAL" review "$ID";
	"$CORRAL" review "$ID" --json; } 2>&1)
check "show, show --json, review, review --json never have it" \
	bash -c "! grep -qF '$CANARY' <<<\"\$1\"" _ "$out"
check "the state directory never has it (but the agent's own .k)" \
	bash -c "! grep -rqaF '$CANARY' '$CORRAL_STATE_DIR' --exclude=work.img"

# --- cancel while a check runs ------------------------------------------------------
cat >"$XDG_CONFIG_HOME/corral/policy.ini" <<'EOF'
[limits]
wall_time = 300s
[checks]
timeout = 120s
slow = echo STARTED >&2; exec sleep 7319
EOF
ID2=$(cd "$REPO" && "$CORRAL" new --sandbox bwrap --name slow -- /bin/true)
check "a lease with a slow check starts" valid_id "$ID2"
check "... its check starts (host /proc)" within 60 sleeping 7319
expect_rc 1 "reject refuses while the check runs" "$CORRAL" reject "$ID2"
check "gc refuses too" bash -c "! '$CORRAL' gc '$ID2'"
check "... and the check still runs" sleeping 7319
check "cancel is taken while the check runs" "$CORRAL" cancel "$ID2"
check "... the check is stopped (host /proc)" within 20 bash -c \
	"$(declare -f sleeping); ! sleeping 7319"
settled "$ID2"
J=$(js "$ID2")
check "... the lease ends cancelled" jq_eq "$J" .lease_state cancelled
check "... nothing of it is left running or claimed" jq_eq "$J" '[.resources[] |
	select(.state != "removed" and (.kind=="cgroup" or .kind=="sandbox"))] | length' 0

# left_diag ID: the lease's resources not removed, its cleanup, and what
# the last reconcile said ($out)
left_diag() {
	js "$1" | jq -c '{cleanup, reason: .cleanup_reason,
	    left: [.resources[] | select(.state != "removed")]}'
	echo "reconcile said: $out"
}

# nothing_of_checks ID WHAT: no check run of lease ID runs or holds anything
nothing_of_checks() {
	local id=$1 what=$2
	checkd "$what: no check resource is left unremoved" "left_diag $id" \
		jq_eq "$(js "$id")" '[.resources[] | select((.identity |
		startswith("check:")) and .state != "removed")] | length' 0
	check "$what: no uid slot names the lease or a check of it" bash -c \
		"! grep -rqs '^$id' /run/corral/uids/*/owner"
	check "$what: no check cgroup is left on the host" bash -c \
		"! find /sys/fs/cgroup -maxdepth 6 -type d -name 'lease-$id.*' 2>/dev/null | grep -q ."
}

# --- the holder SIGKILLed while a check runs (issue 16 item 4) -------------------
S3=$((7200000 + $$ % 100000 * 2))
cat >"$XDG_CONFIG_HOME/corral/policy.ini" <<EOF
[limits]
wall_time = 300s
[checks]
timeout = 120s
slow = exec sleep $S3
EOF
ID3=$(cd "$REPO" && "$CORRAL" new --sandbox bwrap --name lost -- /bin/true)
check "a lease whose check will be orphaned starts" valid_id "$ID3"
check "... its check starts (host /proc)" within 60 sleeping "$S3"
H3=$(js "$ID3" | jq -r .holder_pid)
H3S=$(pid_start "$H3")
kill -9 "$H3"
check "... its holder is gone" within 20 pid_gone "$H3" "$H3S"
out=$("$CORRAL" reconcile 2>&1)
check "reconcile: holder_lost" grep -q "holder_lost.*$ID3" <<<"$out"
check "... the check is stopped (host /proc)" within 20 bash -c \
	"$(declare -f sleeping); ! sleeping $S3"
J=$(js "$ID3")
check "... the lease failed holder_lost, no check pending" jq_eq "$J" \
	'"\(.lease_state) \(.failed_reason) \([.result.checks[]? | select(.status == "pending")] | length)"' \
	"failed holder_lost 0"
nothing_of_checks "$ID3" "holder lost"
out=$("$CORRAL" reject "$ID3" 2>&1)
check "reject confirms its cleanup" test $? = 0
checkd "... cleanup confirmed" "left_diag $ID3" jq_eq "$(js "$ID3")" .cleanup confirmed
check "gc removes it" "$CORRAL" gc "$ID3"
check "... no uid slot names it after gc" bash -c "! grep -rqs '^$ID3' /run/corral/uids/*/owner"

# --- apply killed while the checks of its rebased commit run ---------------------
# The check sleeps only on a tree with other.txt: the target's own file,
# in the result only once apply rebased it onto the advanced target.
S4=$((7300000 + $$ % 100000 * 2))
cat >"$XDG_CONFIG_HOME/corral/policy.ini" <<EOF
[limits]
wall_time = 300s
[checks]
timeout = 120s
slow = if [ -e other.txt ]; then exec sleep $S4; fi
EOF
git -C "$REPO" branch -f target main
ID4=$(cd "$REPO" && "$CORRAL" new --sandbox bwrap --name rebased -- /bin/sh -c 'echo new >new.txt')
check "a lease to rebase starts" valid_id "$ID4"
settled "$ID4"
check "... its result is ready, its check passed" jq_eq "$(js "$ID4")" \
	'"\(.lease_state) \([.result.checks[].status] | join(","))"' "result_ready pass"
"$CORRAL" review "$ID4" >/dev/null 2>&1
C4=$(js "$ID4" | jq -r .result.commit)
git -C "$REPO" worktree add -q "$TMP/tgt" target
echo other >"$TMP/tgt/other.txt"
git -C "$TMP/tgt" add other.txt && git -C "$TMP/tgt" commit -qm advance
T4=$(git -C "$REPO" rev-parse target)
git -C "$REPO" worktree remove --force "$TMP/tgt"
"$CORRAL" apply "$ID4" --into target >"$TMP/apply4.log" 2>&1 &
A4=$!
check "the apply rebases and runs the check on the new commit (host /proc)" \
	within 60 sleeping "$S4"
kill -9 "$A4"
wait "$A4" 2>/dev/null
"$CORRAL" reconcile >"$TMP/reconcile4.log" 2>&1
check "reconcile: the check is stopped (host /proc)" within 20 bash -c \
	"$(declare -f sleeping); ! sleeping $S4"
J=$(js "$ID4")
nothing_of_checks "$ID4" "apply killed"
check "... receipt checks_interrupted" jq_eq "$J" \
	'[.receipts[] | select(.kind == "checks_interrupted")] | length' 1
check "... the move of corral/<id> was put back: the result names the reviewed commit" \
	jq_eq "$J" '"\(.lease_state) \(.result.commit) \(.result.reviewed)"' "result_ready $C4 $C4"
check "... corral/<id> holds it" test "$(git -C "$REPO" rev-parse "corral/$ID4")" = "$C4"
check "... the target never moved" test "$(git -C "$REPO" rev-parse target)" = "$T4"
check "... no intent is left open" bash -c "! '$CORRAL' reconcile --dry-run | grep -q intent"
finish

