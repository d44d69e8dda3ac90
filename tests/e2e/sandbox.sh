#!/usr/bin/env bash
# sandbox.sh: sandboxed (bwrap) leases through the real binary (issue 6,
# SPEC 3, 6, 8.7, 9.2, 11): a lease runs under its own uid with its
# preflight facts in the receipt and its sandbox shown by `show`; the
# initial prompt goes in once the agent waits at its prompt; limits end a
# lease with a named reason; a dead holder's sandbox is stopped by
# reconcile and its workspace kept; a result's workspace is released once
# it is a commit, unless [result] keep_workspace; gc removes everything. Bad input --
# bwrap missing, user namespaces off, a policy with an unknown key, wider
# than the operator's, with a relative or credential mount, unrestricted
# network, an unknown base, a missing prompt -- gives a named error and
# exit class, starts nothing and leaves nothing behind.
set -u
. "$(dirname "$0")/lib.bash"

needs_root
REPO=$TMP/repo
new_repo "$REPO"
# History with deltas, a binary and a subdirectory: a real clone to seed.
mkdir -p "$REPO/src"
for i in 1 2 3; do
	seq 1 2000 >"$REPO/src/numbers.txt"
	echo "v$i" >>"$REPO/src/numbers.txt"
	head -c 4096 /dev/zero >"$REPO/blob.bin"
	echo "$i" >>"$REPO/blob.bin"
	git -C "$REPO" add -A
	git -C "$REPO" commit -q -m "c$i"
done
BASE=$(git -C "$REPO" rev-parse HEAD)
mkdir -p "$XDG_CONFIG_HOME/corral"
cat >"$XDG_CONFIG_HOME/corral/policy.ini" <<'EOF'
[limits]
wall_time = 60s
memory = 256M
pids = 128
disk = 32M
inodes = 4096
EOF
new() { (cd "$REPO" && "$CORRAL" new "$@"); }
js() { "$CORRAL" show "$1" --json; }
# The lease has ended and its holder has torn its sandbox down.
settled() {
	local i
	"$CORRAL" wait "$1" --until result_ready,failed,cancelled --timeout 60 >/dev/null 2>&1
	for i in $(seq 150); do
		[ "$(js "$1" | jq '[.resources[] | select((.kind=="cgroup" or
		    .kind=="sandbox" or .kind=="holder" or .kind=="socket") and
		    .state!="removed")] | length')" = 0 ] && return 0
		sleep 0.2
	done
	return 1
}
nothing_of() { # ID: no process, cgroup, uid slot, mount (but the workspace)
	local id=$1
	[ -z "$(find /sys/fs/cgroup -maxdepth 8 -type d -name "lease-$id" 2>/dev/null)" ] &&
	    ! grep -qlx "$id" /run/corral/uids/slot-*/owner 2>/dev/null &&
	    [ -z "$(grep -F "$id" /proc/self/mountinfo | awk '{print $5}' |
	    grep -vx "$CORRAL_STATE_DIR/leases/$id/work")" ]
}

# --- a lease: uid, receipt facts, show --------------------------------------------
printf 'the initial prompt\n' >"$TMP/prompt"
id=$(new --name first --prompt-file "$TMP/prompt" -- /bin/bash -c \
	'echo "uid=$(id -u) user=$(id -un) pwd=$PWD"; read -r -p "ask> " x;
	 echo "got [$x]"; echo "$x" >/work/got; git -C /work rev-parse HEAD')
check "new prints a lease ID" valid_id "$id"
check "the agent runs as the sandbox user in /work" wait_screen "$id" "user=sbx pwd=/work"
check "the prompt reaches it once it waits at its prompt" wait_screen "$id" "got [the initial prompt]"
check "the workspace is the base commit" wait_screen "$id" "$BASE"
settled "$id"
j=$(js "$id")
check "show: sandboxed, adapter bwrap" jq_eq "$j" '"\(.mode) \(.adapter)"' "sandboxed bwrap"
check "show: the isolation label names the class (unverified here)" \
	jq_eq "$j" .isolation "bwrap unverified"
check "show: the sandbox ID is the lease uid" \
	test -n "$(jq -r .sandbox_id <<<"$j" | grep -E '^uid:2[0-9]{6}$')"
check "show: the policy and its limits" jq_eq "$j" '"\(.limits.memory_bytes) \(.limits.wall_time_s) \(.policy | test("\\[limits\\]"))"' "268435456 60 true"
check "the receipt verifies" jq_eq "$j" .receipt.verified true
out=$("$CORRAL" show "$id")
check "show prints the policy as indented sections and keys" bash -c \
	"grep -qx '  \[limits\]' <<<'$out' && grep -qx '    memory = 268435456' <<<'$out'"
check "show prints the limits one per line" grep -qE '^  memory_bytes +=  ?268435456$' <<<"$out"
pf=$(jq '.receipts[] | select(.kind=="preflight") | .fields' <<<"$j")
check "receipt: bwrap path and its hash" jq_eq "$pf" '"\(.bwrap_path) \(.bwrap_sha256)"' \
	"/usr/bin/bwrap $(sha256sum /usr/bin/bwrap | cut -d' ' -f1)"
check "receipt: kernel, filter and policy hashes" jq_eq "$pf" \
	'[.kernel, .filter_sha256, .policy_sha256] | map(length > 0) | all' true
check "receipt: the agent binary's hash" jq_eq "$pf" .agent_sha256 \
	"$(sha256sum /usr/bin/bash | cut -d' ' -f1)"
check "receipt: the prompt's SHA-256" jq_eq "$j" \
	'.receipts[] | select(.kind=="prompt_sent") | .fields.sha256' \
	"$(printf 'the initial prompt\n' | sha256sum | cut -d' ' -f1)"
check "receipt: teardown by exact ID" jq_eq "$j" \
	'.receipts[] | select(.kind=="teardown") | .fields.ok' true
# Its result is a commit: the workspace is released (issue 17), the
# result's files are in the review worktree.
check "the result is in the review worktree" \
	test "$(cat "$CORRAL_STATE_DIR/worktrees/$id/got")" = "the initial prompt"
check "the workspace is released once the result is a commit" \
	test ! -e "$CORRAL_STATE_DIR/leases/$id/work" -a ! -e "$CORRAL_STATE_DIR/leases/$id/work.img"
check "... journaled: intent, then outcome, the row removed" jq_eq "$j" \
	'"\([.receipts[].kind | select(startswith("workspace_release"))] | join(" ")) \(.result.workspace) \([.resources[] | select(.kind=="workspace") | .state] | join(" "))"' \
	"workspace_release workspace_released released removed"
check "nothing else of it is left, no mount" nothing_of "$id"
check "... not even the workspace's" test -z "$(grep -F "$id" /proc/self/mountinfo)"
check "ls --json carries the label" jq_eq "$("$CORRAL" ls --all --json)" \
	".[] | select(.id==\"$id\") | .isolation" "bwrap unverified"

# --- [result] keep_workspace: the operator keeps a result's workspace -------------------
mkdir -p "$TMP/keepcfg/corral"
{ cat "$XDG_CONFIG_HOME/corral/policy.ini"; printf '[result]\nkeep_workspace = true\n'; } \
	>"$TMP/keepcfg/corral/policy.ini"
idk=$(cd "$REPO" && XDG_CONFIG_HOME=$TMP/keepcfg "$CORRAL" new --name keeper -- \
	/bin/sh -c 'echo kept >/work/kept')
settled "$idk"
jk=$(js "$idk")
check "keep_workspace: result_ready, the policy says so" jq_eq "$jk" \
	'"\(.lease_state) \(.policy | test("keep_workspace = true"))"' "result_ready true"
check "keep_workspace: the workspace is kept, handed back to root" \
	test "$(stat -c %u "$CORRAL_STATE_DIR/leases/$idk/work/kept")" = 0
check "keep_workspace: nothing released" jq_eq "$jk" \
	'[.receipts[] | select(.kind=="workspace_release")] | length' 0
check "keep_workspace: reject removes it" "$CORRAL" reject "$idk"
check "... mount and all" test ! -e "$CORRAL_STATE_DIR/leases/$idk/work" \
	-a -z "$(grep -F "$idk" /proc/self/mountinfo)"

# --- doctor --------------------------------------------------------------------------
out=$("$CORRAL" doctor 2>&1); rc=$?
check "doctor passes here (exit 0)" test "$rc" -eq 0
check "doctor prints the facts" grep -q "^bwrap .*sha256:" <<<"$out"
check "doctor says the configuration is unverified" grep -q "unverified" <<<"$out"
check "doctor --json" jq_eq "$("$CORRAL" doctor --json)" .exit_class 0

# --- limits: a named reason ------------------------------------------------------------
# ended_on ID LIMIT WHAT: the lease failed limit_LIMIT, its receipt names
# LIMIT, nothing of it is left.
ended_on() {
	settled "$1"
	check "$3 ends the lease: failed limit_$2" jq_eq "$(js "$1")" \
		'"\(.lease_state) \(.failed_reason)"' "failed limit_$2"
	check "its receipt names the limit" jq_eq "$(js "$1")" \
		'.receipts[] | select(.kind=="limit_hit") | .fields.limit' "$2"
	check "nothing of it is left" nothing_of "$1"
	check "its workspace is kept (no commit), handed back to root" \
		test "$(stat -c '%u %a' "$CORRAL_STATE_DIR/leases/$1/work")" = "0 700"
}
printf '[limits]\nwall_time = 2s\n' >"$TMP/short.ini"
id2=$(new --name sleeper --policy "$TMP/short.ini" -- /bin/sleep 1e9)
ended_on "$id2" wall_time "wall time"
# An agent that forks past pids = 16: sh gives up ("Cannot fork", exit 2)
# and the lease names the limit, not the exit.
printf '[limits]\npids = 16\n' >"$TMP/pids.ini"
idp=$(new --name forker --policy "$TMP/pids.ini" -- /bin/sh -c \
	'i=0; while [ $i -lt 40 ]; do sleep 1e9 & i=$((i + 1)); done; wait')
ended_on "$idp" pids "forking past pids"

# --- a dead holder: reconcile stops the sandbox, keeps the workspace -----------------
id3=$(new --name orphaned -- /bin/sh -c '(setsid sleep 1e9 &); echo kept >/work/kept; sleep 1e9')
for _ in $(seq 300); do [ -s "$CORRAL_STATE_DIR/leases/$id3/work/kept" ] && break; sleep 0.1; done
hp=$(js "$id3" | jq -r .holder_pid)
# Its sandbox by PID (not by uid: once reconcile frees the slot, another
# lease on this machine may run under it): the tree under the holder's
# child, the detached sleep included (forked before kept is written).
procs3=$(proc_tree "$("$CORRAL" ls --json | jq -r ".[] | select(.id == \"$id3\") | .child_pid")")
check "its sandbox runs (bwrap, init, the agent, the detached sleep)" \
	test "$(grep -c . <<<"$procs3")" -ge 5
kill -9 "$hp"
"$CORRAL" reconcile >/dev/null 2>&1
check "reconcile fails it: holder_lost" jq_eq "$(js "$id3")" \
	'"\(.lease_state) \(.failed_reason)"' "failed holder_lost"
check "its sandbox processes are stopped" poll all_gone "$procs3"
check "its cgroups and uid slot are gone" nothing_of "$id3"
check "its workspace is kept for extraction" \
	test "$(cat "$CORRAL_STATE_DIR/leases/$id3/work/kept")" = kept
check "gc removes it all, by exact ID" "$CORRAL" gc "$id3"
check "... the workspace mount and image too" \
	test ! -e "$CORRAL_STATE_DIR/leases/$id3" -a -z "$(grep -F "$id3" /proc/self/mountinfo)"
check "... and the branch" bash -c "! git -C '$REPO' show-ref -q 'refs/heads/corral/$id3'"

# --- bad input: a named error and exit class, nothing started or left -----------------
# refused ID_VAR WANT_RC REASON NAME -- ARGS: corral new refuses; the journal
# has the lease failed with REASON and no resource; the state directory has
# nothing of it; no uid slot or cgroup.
refused() {
	local want=$1 reason=$2 name=$3 out rc lid
	shift 4
	out=$(cd "$REPO" && env ${OPCFG:+XDG_CONFIG_HOME=$OPCFG} "$CORRAL" new --name "$name" "$@" 2>&1); rc=$?
	check "$name: exit $want" test "$rc" -eq "$want"
	check "$name: the error names $reason" grep -q -- "$reason" <<<"$out"
	lid=$("$CORRAL" ls --all --json | jq -r ".[] | select(.name==\"$name\") | .id")
	check "$name: journaled failed ($reason)" jq_eq "$(js "$lid")" \
		'"\(.lease_state) \(.failed_reason)"' "failed $reason"
	check "$name: no resource was created" jq_eq "$(js "$lid")" \
		'[.resources[] | select(.state != "planned")] | length' 0
	check "$name: nothing in the state directory" \
		test ! -e "$CORRAL_STATE_DIR/leases/$lid" -a ! -e "$CORRAL_STATE_DIR/worktrees/$lid"
	check "$name: no branch, uid slot or cgroup" bash -c \
		"! git -C '$REPO' show-ref -q 'refs/heads/corral/$lid' &&
		 ! grep -qlx '$lid' /run/corral/uids/slot-*/owner 2>/dev/null &&
		 [ -z \"\$(find /sys/fs/cgroup -maxdepth 8 -name 'lease-$lid')\" ]"
}
pol() { printf '%s\n' "$2" >"$TMP/$1.ini"; echo "$TMP/$1.ini"; }

refused 1 policy_invalid unknown-key -- --policy "$(pol unknown '[limits]
memroy = 1G')" -- /bin/true
out=$(cd "$REPO" && "$CORRAL" new --policy "$TMP/unknown.ini" -- /bin/true 2>&1)
check "unknown-key: the message names the file and line" grep -q "unknown.ini:2" <<<"$out"
refused 1 policy_wider wider -- --policy "$(pol wider '[limits]
memory = 1G')" -- /bin/true
refused 1 policy_invalid relative-mount -- --policy "$(pol relative '[mounts]
ro = relative/path')" -- /bin/true
# The operator's own policy may set anything; the preflight refuses these.
opcfg() { mkdir -p "$TMP/$1/corral"; printf '%s\n' "$2" >"$TMP/$1/corral/policy.ini"; echo "$TMP/$1"; }
mkdir -p "$HOME/.ssh" 2>/dev/null
OPCFG=$(opcfg op-ssh "[mounts]
ro = $HOME/.ssh") refused 13 credential_scope_invalid ssh-mount -- -- /bin/true
# The host's system paths and the state directory are never mounted: the
# policy file and line are named, nothing is created.
OPCFG=$(opcfg op-proc '[mounts]
ro = /proc') refused 1 policy_invalid proc-mount -- -- /bin/true
out=$(cd "$REPO" && XDG_CONFIG_HOME="$TMP/op-proc" "$CORRAL" new -- /bin/true 2>&1)
check "proc-mount: the message names the file and line" grep -q "op-proc/corral/policy.ini:2: .*host system path" <<<"$out"
OPCFG=$(opcfg op-sysfs '[mounts]
ro = /sys/fs') refused 1 policy_invalid sysfs-mount -- -- /bin/true
OPCFG=$(opcfg op-state "[mounts]
ro = $CORRAL_STATE_DIR") refused 13 credential_scope_invalid state-mount -- -- /bin/true
OPCFG=$(opcfg op-net '[network]
allow = *') refused 30 isolation_unsatisfiable any-network -- -- /bin/true
refused 1 request_invalid no-prompt -- --prompt-file "$TMP/no-such-prompt" -- /bin/true
# An unknown base is refused before anything is created (SPEC 6.2).
refused 1 unknown_base bad-base -- --base no-such-ref -- /bin/true

# bwrap missing: in a mount namespace of this test only (never the host's),
# /usr/bin/bwrap is covered by an empty file, as if it were not installed.
: >"$TMP/not-bwrap"
out=$(cd "$REPO" && unshare -m --propagation private sh -c \
	"mount --bind '$TMP/not-bwrap' /usr/bin/bwrap && exec '$CORRAL' new --name no-bwrap -- /bin/true" 2>&1); rc=$?
check "bwrap missing: exit 30" test "$rc" -eq 30
check "bwrap missing: isolation_unsatisfiable, no fallback" \
	grep -q "isolation_unsatisfiable.*no fallback" <<<"$out"
lid=$("$CORRAL" ls --all --json | jq -r '.[] | select(.name=="no-bwrap") | .id')
check "bwrap missing: journaled failed, nothing created" jq_eq "$(js "$lid")" \
	'"\(.lease_state) \(.failed_reason) \([.resources[]] | length)"' \
	"failed isolation_unsatisfiable 0"
check "bwrap missing: the host's bwrap is untouched" \
	test -x /usr/bin/bwrap -a -s /usr/bin/bwrap

# User namespaces off, as the kernel has them at user.max_user_namespaces=0
# (ENOSPC), for corral's process tree only (tests/adversarial/
# adv_nouserns.c): the host sysctl is not writable everywhere, and changing
# it host-wide would break whatever else runs meanwhile.
NOUSERNS=${CORRAL_ADV_NOUSERNS:-$CORRAL_FIXTURES/adv_nouserns}
out=$(cd "$REPO" && "$NOUSERNS" "$CORRAL" new --name no-userns -- /bin/true 2>&1); rc=$?
check "user namespaces off: exit 30" test "$rc" -eq 30
check "user namespaces off: isolation_unsatisfiable, the probe named" \
	grep -q "isolation_unsatisfiable.*userns\|isolation_unsatisfiable.*namespace" <<<"$out"
check "user namespaces: the host's are untouched" unshare -U true
lid=$("$CORRAL" ls --all --json | jq -r '.[] | select(.name=="no-userns") | .id')
check "user namespaces off: nothing created" jq_eq "$(js "$lid")" \
	'"\(.lease_state) \([.resources[]] | length)"' "failed 0"

# A failure after the git step takes back all it made: a workspace limit
# the repository does not fit.
out=$(cd "$REPO" && "$CORRAL" new --name too-small --policy "$(pol small '[limits]
disk = 64K')" -- /bin/true 2>&1); rc=$?
lid=$("$CORRAL" ls --all --json | jq -r '.[] | select(.name=="too-small") | .id')
check "too-small: exit 1 with a reason" test "$rc" -eq 1 -a -n "$out"
check "too-small: journaled failed" jq_eq "$(js "$lid")" .lease_state failed
check "too-small: every resource it made is removed" jq_eq "$(js "$lid")" \
	'[.resources[] | select(.state != "removed")] | length' 0
check "too-small: nothing in the state directory, no branch, no mount" \
	test ! -e "$CORRAL_STATE_DIR/leases/$lid" -a ! -e "$CORRAL_STATE_DIR/worktrees/$lid" \
	-a -z "$(git -C "$REPO" branch --list "corral/$lid")" -a -z "$(grep -F "$lid" /proc/self/mountinfo)"
check "too-small: no uid slot or cgroup" nothing_of "$lid"

# A disk that fills while the workspace is seeded: the base's files (3 MiB
# of random bytes) fit the 4 MiB limit, so nothing refuses them first, but
# not with their pack beside them. The lease fails disk_full naming the
# workspace, and nothing of it is left: no image, loop device, mount,
# branch, review worktree or lease directory.
git -C "$REPO" checkout -q -b fat main && mkdir -p "$REPO/fat" &&
for f in 1 2 3; do head -c 1048576 /dev/urandom >"$REPO/fat/$f.bin"; done &&
git -C "$REPO" add fat && git -C "$REPO" commit -q -m fat &&
git -C "$REPO" checkout -q main
out=$(cd "$REPO" && "$CORRAL" new --base fat --name seed-full --policy "$(pol seedfull '[limits]
disk = 4M')" -- /bin/true 2>&1); rc=$?
lid=$("$CORRAL" ls --all --json | jq -r '.[] | select(.name=="seed-full") | .id')
check "seed-full: exit 1" test "$rc" -eq 1 -a -n "$lid"
check "seed-full: disk_full, naming the workspace" grep -q \
	"disk_full: $CORRAL_STATE_DIR/leases/$lid/work: no space left while seeding" <<<"$out"
check "seed-full: journaled failed disk_full" jq_eq "$(js "$lid")" \
	'"\(.lease_state) \(.failed_reason)"' "failed disk_full"
check "seed-full: every resource it made is removed" jq_eq "$(js "$lid")" \
	'[.resources[] | select(.state != "removed")] | length' 0
check "seed-full: no image, loop device, mount, branch, worktree or lease directory" \
	test ! -e "$CORRAL_STATE_DIR/leases/$lid" -a ! -e "$CORRAL_STATE_DIR/worktrees/$lid" \
	-a -z "$(git -C "$REPO" branch --list "corral/$lid")" -a -z "$(grep -F "$lid" /proc/self/mountinfo)" \
	-a -z "$(grep -lF "$lid" /sys/block/loop*/loop/backing_file 2>/dev/null)"
check "seed-full: no uid slot or cgroup" nothing_of "$lid"

# --- a crash at every sandbox step, then reconcile (SPEC 9.2) ---------------------
# CORRAL_FAULT (test builds) kills `corral new` right before and after each
# step, and after a resource exists but before the journal says so (the
# workspace: its bounded image mounted and seeded, not yet journaled). One
# reconcile later the lease is failed and nothing of it is left.
for point in workspace.before workspace.created workspace.after \
    sandbox.before sandbox.created sandbox.after cgroup.before \
    cgroup.created cgroup.after bound.before bound.created bound.after \
    holder.before; do
	out=$(cd "$REPO" && CORRAL_FAULT=provision.$point "$CORRAL" new --name "crash-$point" -- /bin/true 2>&1); rc=$?
	lid=$("$CORRAL" ls --all --json | jq -r ".[] | select(.name==\"crash-$point\") | .id")
	check "crash at $point: killed there (137)" test "$rc" -eq 137 -a -n "$lid"
	"$CORRAL" reconcile >/dev/null 2>&1
	check "crash at $point: reconciled to failed (provisioning_interrupted)" \
		jq_eq "$(js "$lid")" '"\(.lease_state) \(.failed_reason)"' \
		"failed provisioning_interrupted"
	check "crash at $point: every resource removed, cleanup confirmed" jq_eq "$(js "$lid")" \
		'"\([.resources[] | select(.state != "removed")] | length) \(.cleanup)"' "0 confirmed"
	check "crash at $point: no directory, branch, mount, uid slot or cgroup" bash -c \
		"[ ! -e '$CORRAL_STATE_DIR/leases/$lid' ] && [ ! -e '$CORRAL_STATE_DIR/worktrees/$lid' ] &&
		 ! git -C '$REPO' show-ref -q 'refs/heads/corral/$lid' &&
		 ! grep -qF '$lid' /proc/self/mountinfo &&
		 ! grep -qlx '$lid' /run/corral/uids/slot-*/owner 2>/dev/null &&
		 [ -z \"\$(find /sys/fs/cgroup -maxdepth 8 -name 'lease-$lid')\" ]"
done

# --- a repository's policy, read from the base commit (SPEC 8.6) ---------------------
# .corral/policy.ini in the base commit's tree may only narrow the
# operator's (memory = 256M above); one only in the worktree is ignored.
repo_policy() { # BRANCH TEXT: commit .corral/policy.ini on BRANCH (from main)
	git -C "$REPO" checkout -q -b "$1" main && mkdir -p "$REPO/.corral" &&
	printf '%s\n' "$2" >"$REPO/.corral/policy.ini" &&
	git -C "$REPO" add .corral/policy.ini && git -C "$REPO" commit -q -m "$1" &&
	git -C "$REPO" checkout -q main
}
repo_policy pol-wide $'[limits]\nmemory = 512M'
repo_policy pol-narrow $'[limits]\nmemory = 128M\npids = 64'
out=$(new --base pol-wide --name polwide -- /bin/true 2>&1); rc=$?
pid=$("$CORRAL" ls --all --json | jq -r '.[] | select(.name=="polwide") | .id')
check "a wider repository policy: refused (exit 1)" test "$rc" -eq 1
check "a wider repository policy: named, with its file and line" \
	grep -q "policy_wider: $REPO@[0-9a-f]*:.corral/policy.ini:2: .*memory" <<<"$out"
check "a wider repository policy: the lease failed policy_wider" \
	jq_eq "$(js "$pid")" '"\(.lease_state) \(.failed_reason)"' "failed policy_wider"
check "a wider repository policy: nothing left" bash -c \
	"[ ! -e '$CORRAL_STATE_DIR/leases/$pid' ] && [ ! -e '$CORRAL_STATE_DIR/worktrees/$pid' ] &&
	 ! git -C '$REPO' show-ref -q 'refs/heads/corral/$pid'"
check "a wider repository policy: no uid slot or cgroup" nothing_of "$pid"
idn=$(new --base pol-narrow --name polnarrow -- /bin/true)
settled "$idn"
j=$(js "$idn")
check "a narrower repository policy narrows (memory 128M, pids 64)" \
	jq_eq "$j" '"\(.limits.memory_bytes) \(.limits.pids)"' "134217728 64"
check "the receipt records the repository policy's commit and digest" jq_eq "$j" \
	'.receipts[] | select(.kind=="repo_policy") | "\(.fields.commit) \(.fields.sha256)"' \
	"$(git -C "$REPO" rev-parse pol-narrow) $(git -C "$REPO" show pol-narrow:.corral/policy.ini | sha256sum | cut -d' ' -f1)"
mkdir -p "$REPO/.corral"
printf '[limits]\nmemory = 64M\n' >"$REPO/.corral/policy.ini"	# uncommitted
idu=$(new --name poluncommitted -- /bin/true)
settled "$idu"
check "a policy only in the worktree is ignored (memory stays 256M)" \
	jq_eq "$(js "$idu")" .limits.memory_bytes 268435456
check "...and no repository policy is recorded" jq_eq "$(js "$idu")" \
	'[.receipts[] | select(.kind=="repo_policy")] | length' 0
rm -rf "$REPO/.corral"

# --- an orphan cgroup: reported after two inventories, removed by gc ID --------------
# A lease cgroup under this state directory's tag in corral's parent (the
# one corral's own cgroup gives, as sbx_cgroup_locate computes it) that no
# lease of this state directory owns: the bwrap adapter's .list names it,
# reconcile reports it, and only `corral gc ID` removes it, after two
# consistent inventories (SPEC 9.2). The same stray without the tag (an
# older corral's) or under another state directory's tag is never named.
STRAY=20240101-000000-000-cafe
tag=state-$(printf %s "$(realpath "$CORRAL_STATE_DIR")" | sha256sum | cut -c1-16)
strays=() others=()
for ctrl in memory pids; do
	rel=$(awk -F: -v c="$ctrl" '$2 == c { print $3 }' /proc/self/cgroup)
	d=/sys/fs/cgroup/$ctrl${rel%/}/corral/$tag/lease-$STRAY
	mkdir -p "$d" && strays+=("$d")
	for o in corral corral/state-0123456789abcdef; do
		d=/sys/fs/cgroup/$ctrl${rel%/}/$o/lease-$STRAY-x
		mkdir -p "$d" && others+=("$d")
	done
done
check "a stray lease cgroup exists under corral's parent" test "${#strays[@]}" -eq 2
"$CORRAL" reconcile >"$TMP/rec1" 2>&1
check "reconcile reports it as an orphan (one inventory)" \
	grep -q "^orphan *$STRAY .*sandbox bwrap:$STRAY has no lease (seen by 1 inventory)" "$TMP/rec1"
expect_rc 1 "gc refuses it after one inventory" "$CORRAL" gc "$STRAY"
check "so it is still there" test -d "${strays[0]}"
j=$("$CORRAL" reconcile --json)
check "a second consistent inventory makes it removable" jq_eq "$j" \
	"[.. | objects | select(.id? == \"$STRAY\" and .kind? == \"orphan\") | .removable] | any" true
expect_rc 0 "gc removes it by exact ID" "$CORRAL" gc "$STRAY"
check "its cgroups are gone" bash -c "! ls -d ${strays[*]} 2>/dev/null"
check "the next reconcile no longer reports it" bash -c \
	"! '$CORRAL' reconcile | grep -q '$STRAY'"
check "another state directory's (or an untagged) stray is never named" \
	bash -c "! grep -q '$STRAY-x' '$TMP/rec1'"
for d in "${strays[@]}" "${others[@]}"; do rmdir "$d" 2>/dev/null; done

# --- a lost check run's cgroup: reconcile lists it by the run's ID, gc takes it ------
# A check run's sandbox is named "<lease ID>.<ms>.<n>" (tui_checks_run);
# one whose lease this journal does not hold is an orphan like any other,
# and `corral gc RUN-ID` removes it after two inventories (it was refused
# as "not a lease ID" although reconcile listed it).
RUN=$STRAY.1764633600000.1
runs=()
for ctrl in memory pids; do
	rel=$(awk -F: -v c="$ctrl" '$2 == c { print $3 }' /proc/self/cgroup)
	d=/sys/fs/cgroup/$ctrl${rel%/}/corral/$tag/lease-$RUN
	mkdir -p "$d" && runs+=("$d")
done
check "a stray check run cgroup exists under corral's parent" test "${#runs[@]}" -eq 2
"$CORRAL" reconcile >"$TMP/rec3" 2>&1
check "reconcile reports the run as an orphan by its ID" \
	grep -q "^orphan *$RUN .*sandbox bwrap:$RUN has no lease" "$TMP/rec3"
"$CORRAL" reconcile >/dev/null 2>&1
expect_rc 0 "gc removes it by the run's exact ID" "$CORRAL" gc "$RUN"
check "the run's cgroups are gone" bash -c "! ls -d ${runs[*]} 2>/dev/null"
check "the next reconcile no longer reports it" bash -c \
	"! '$CORRAL' reconcile | grep -q '$RUN'"
expect_rc 2 "a malformed run ID is still refused" "$CORRAL" gc "$STRAY.1764633600000.x"
for d in "${runs[@]}"; do rmdir "$d" 2>/dev/null; done

finish
