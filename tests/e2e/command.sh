#!/usr/bin/env bash
# command.sh: the command adapter through the real binary (issue 7 item 4,
# SPEC 8.1, docs/command-adapter.md). The operator's [command] hooks, written
# here, run the work under bwrap on this machine as an unprivileged uid
# with a copy of the workspace (as a remote hook would) and log every call.
# A lease through them runs on the lease PTY, reaches its result, and its
# teardown hook is called with the exact ID (asserted from the host side,
# through the hooks' log); `show` and `ls --json` say operator-asserted;
# the list hook feeds reconciliation. Bad input: a relative hook path and
# a missing hook are named with file:line, a failing provision hook fails
# the lease with a named reason and leaves nothing behind.
set -u
. "$(dirname "$0")/lib.bash"

needs_root
REPO=$TMP/repo
new_repo "$REPO"
echo one >"$REPO/a.txt"
git -C "$REPO" add -A
git -C "$REPO" commit -q -m c1
BASE=$(git -C "$REPO" rev-parse HEAD)

H=$TMP/hooks
# The hooks' "machines", one directory per lease: outside the 0700 test
# directory, so the unprivileged uid can reach its copy of the workspace.
HS=$(mktemp -d "${TMPDIR:-/tmp}"/corral-cmdhooks.XXXXXX)
chmod 0711 "$HS"
trap 'cleanup; rm -rf "$HS"' EXIT
LOG=$TMP/hooks.log
mkdir -p "$H" "$XDG_CONFIG_HOME/corral"
cat >"$H/provision" <<'EOF'
#!/bin/sh
# provision STATE LOG ID WORKSPACE
set -eu
state=$1 log=$2 id=$3 ws=$4
echo "provision $id $ws" >>"$log"
[ "$id" = "$CORRAL_LEASE_ID" ] || exit 2
[ -z "${CMD_TEST_FAIL_PROVISION-}" ] || { mkdir -p "$state/$id"; echo "no machine for $id" >&2; exit 3; }
mkdir "$state/$id"
cp -a "$ws" "$state/$id/work"
chown -R 65534:65534 "$state/$id/work"
echo "local-bwrap $id"
EOF
cat >"$H/exec" <<'EOF'
#!/bin/sh
# exec STATE LOG ID WORKSPACE -- CMD...: CMD under bwrap on the lease PTY,
# then the workspace's contents back into WORKSPACE.
state=$1 log=$2 id=$3 ws=$4
shift 4
[ "${1-}" = -- ] && shift
echo "exec $id tty=$(tty) pid=$$" >>"$log"
[ -d "$state/$id/work" ] || exit 125
setpriv --reuid=65534 --regid=65534 --clear-groups -- \
    /usr/bin/bwrap --unshare-all --die-with-parent --new-session \
    --cap-drop ALL --ro-bind /usr /usr --symlink usr/bin /bin \
    --symlink usr/sbin /sbin --symlink usr/lib /lib \
    --symlink usr/lib64 /lib64 --proc /proc --dev /dev --tmpfs /tmp \
    --bind "$state/$id/work" /work --chdir /work --clearenv \
    --setenv PATH /usr/bin:/bin --setenv HOME /tmp \
    --setenv TERM "${TERM:-xterm-256color}" -- "$@"
rc=$?
find "$ws" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
cp -a "$state/$id/work/." "$ws/" && chown -R 0:0 "$ws" || exit 125
exit $rc
EOF
cat >"$H/teardown" <<'EOF'
#!/bin/sh
# teardown STATE LOG ID: idempotent.
set -eu
state=$1 log=$2 id=$3
echo "teardown $id" >>"$log"
case $id in '' | */* | .*) exit 2 ;; esac
rm -rf "${state:?}/$id"
EOF
cat >"$H/list" <<'EOF'
#!/bin/sh
# list STATE LOG: one lease ID a line.
state=$1 log=$2
echo "list" >>"$log"
ls -1 "$state"
EOF
chmod 755 "$H"/*
config() {
	cat >"$XDG_CONFIG_HOME/corral/config" <<EOF
[command]
provision = $H/provision $HS $LOG
exec = $H/exec $HS $LOG
teardown = $H/teardown $HS $LOG
list = $H/list $HS $LOG
timeout = 60
EOF
}
config
new() { (cd "$REPO" && "$CORRAL" new --sandbox command "$@"); }
js() { "$CORRAL" show "$1" --json; }
# The lease has ended and its holder has run the teardown hook.
settled() {
	local i
	"$CORRAL" wait "$1" --until result_ready,failed,cancelled --timeout 60 >/dev/null 2>&1
	for i in $(seq 150); do
		[ "$(js "$1" | jq '[.resources[] | select((.kind=="sandbox" or
		    .kind=="holder" or .kind=="socket") and
		    .state!="removed")] | length')" = 0 ] && return 0
		sleep 0.2
	done
	return 1
}

# --- a lease through the hooks ---------------------------------------------------
id=$(new --name remote -- /bin/sh -c 'test -t 0 && t=yes; echo "uid=$(id -u) pwd=$PWD tty=$t";
	read -r -p "ask> " x; echo "got [$x]"; echo "$x" >/work/b.txt; echo two >>a.txt')
check "new --sandbox command prints a lease ID" valid_id "$id"
check "the agent runs in the hooks' sandbox (uid 65534, /work)" wait_screen "$id" "uid=65534 pwd=/work"
check "its stdio is the lease PTY" wait_screen "$id" "tty=yes"
check "input reaches it through the PTY" "$CORRAL" send "$id" 'hello\r'
check "the agent saw the input" wait_screen "$id" "got [hello]"
"$CORRAL" screen "$id" | grep -v '^$' | sed 's/^/# screen: /'
settled "$id"
j=$(js "$id")
check "show: adapter command, isolation operator-asserted" \
	jq_eq "$j" '"\(.mode) \(.adapter) \(.isolation)"' "sandboxed command operator-asserted"
check "show: the sandbox ID names the exact lease" jq_eq "$j" .sandbox_id "command:$id"
check "ls --json carries the label" jq_eq "$("$CORRAL" ls --all --json)" \
	".[] | select(.id==\"$id\") | .isolation" "operator-asserted"
check "the lease reached its result" jq_eq "$j" .lease_state result_ready
check "the provision hook got the exact ID and the workspace" \
	grep -qx "provision $id $CORRAL_STATE_DIR/leases/$id/work" "$LOG"
check "the exec hook ran on a terminal" grep -q "^exec $id tty=/dev/pts/" "$LOG"
check "the teardown hook was called with the exact ID" grep -qx "teardown $id" "$LOG"
check "the hooks' machine for it is gone" test ! -e "$HS/$id"
check "receipt: the provision note" jq_eq "$j" \
	'.receipts[] | select(.kind=="provision") | .fields.note' "local-bwrap $id"
check "receipt: teardown ok" jq_eq "$j" \
	'.receipts[] | select(.kind=="teardown") | .fields.ok' true
check "receipt: the preflight ran the list hook" jq_eq "$j" \
	'.receipts[] | select(.kind=="preflight") | .fields.ok' true
check "the result holds the agent's changes" bash -c \
	"'$CORRAL' review '$id' | grep -q '^+hello' && '$CORRAL' review '$id' | grep -q '^+two'"
check "its workspace is released once the result is a commit" bash -c \
	"test ! -e '$CORRAL_STATE_DIR/leases/$id/work' -a -s '$CORRAL_STATE_DIR/worktrees/$id/b.txt'"
check "... journaled" jq_eq "$("$CORRAL" show "$id" --json)" .result.workspace released
check "sandbox resource journaled as removed" jq_eq "$j" \
	'[.resources[] | select(.kind=="sandbox") | .state] | join(",")' removed

# --- cancel: the hook's process group is signalled, teardown follows ----------------
: >"$LOG"
idc=$(new --name sleeper -- /bin/sleep 1e9)
check "a second lease runs" wait_screen "$idc" "" 5
for i in $(seq 100); do grep -q "^exec $idc" "$LOG" && break; sleep 0.1; done
# The hooks' bwrap by PID: the exec hook's child (setpriv execs it).
hook=$(sed -n "s/^exec $idc .* pid=\([0-9]*\)\$/\1/p" "$LOG")
bw=
for i in $(seq 100); do bw=$(pgrep -P "${hook:-0}" -x bwrap) && break; sleep 0.1; done
bw_start=$(pid_start "$bw")
check "the hooks' bwrap runs the agent (its PID)" test -n "$bw" -a -n "$bw_start"
"$CORRAL" cancel "$idc" >/dev/null 2>&1
"$CORRAL" wait "$idc" --until cancelled,failed --timeout 30 >/dev/null 2>&1
check "cancel ends it" jq_eq "$(js "$idc")" .lease_state cancelled
settled "$idc"
check "cancel: the teardown hook ran with its exact ID" grep -qx "teardown $idc" "$LOG"
bw_gone() { [ -n "$bw_start" ] && pid_gone "$bw" "$bw_start"; }
check "cancel: nothing of the sandbox runs on (its bwrap, whose pid namespace held the agent)" \
	bw_gone

# --- reconcile: the list hook; a stray "machine" is an orphan ------------------------
STRAY=20240101-000000-000-beef
mkdir "$HS/$STRAY"
: >"$LOG"
"$CORRAL" reconcile >"$TMP/rec1" 2>&1
check "reconcile runs the list hook" grep -qx list "$LOG"
check "reconcile reports the stray sandbox as an orphan" \
	grep -q "^orphan *$STRAY .*sandbox command:$STRAY has no lease (seen by 1 inventory)" "$TMP/rec1"
"$CORRAL" reconcile --json >"$TMP/rec2" 2>&1
check "a second inventory makes it removable" jq_eq "$(cat "$TMP/rec2")" \
	"[.findings[] | select(.id==\"$STRAY\") | .removable] | any" true
expect_rc 0 "gc removes it by exact ID" "$CORRAL" gc "$STRAY"
check "gc ran the teardown hook with that ID" grep -qx "teardown $STRAY" "$LOG"
check "the stray machine is gone" test ! -e "$HS/$STRAY"

# --- bad input --------------------------------------------------------------------------
# A failing provision hook: a named error, the lease failed, nothing left.
: >"$LOG"
out=$(cd "$REPO" && CMD_TEST_FAIL_PROVISION=1 "$CORRAL" new --sandbox command --name bad -- /bin/true 2>&1); rc=$?
bid=$("$CORRAL" ls --all --json | jq -r '.[] | select(.name=="bad") | .id')
check "failing provision hook: non-zero exit" test "$rc" -ne 0
check "failing provision hook: a named error with the hook's reason" \
	grep -q "provision_hook_failed: .*no machine for" <<<"$out"
check "failing provision hook: the lease failed with that reason" \
	jq_eq "$(js "$bid")" '"\(.lease_state) \(.failed_reason)"' "failed provision_hook_failed"
check "failing provision hook: teardown called with its exact ID" grep -qx "teardown $bid" "$LOG"
check "failing provision hook: nothing left (hooks, state dir, branch)" bash -c \
	"[ ! -e '$HS/$bid' ] && [ ! -e '$CORRAL_STATE_DIR/leases/$bid' ] &&
	 [ ! -e '$CORRAL_STATE_DIR/worktrees/$bid' ] &&
	 ! git -C '$REPO' show-ref -q 'refs/heads/corral/$bid'"
check "failing provision hook: every resource removed" jq_eq "$(js "$bid")" \
	'[.resources[] | select(.state != "removed")] | length' 0

# A relative hook path: named with file and line, nothing started.
sed -i 's|^exec = .*|exec = exec-hook|' "$XDG_CONFIG_HOME/corral/config"
out=$(new --name rel -- /bin/true 2>&1); rc=$?
check "relative hook: non-zero exit" test "$rc" -ne 0
check "relative hook: named with the config's file:line" \
	grep -q "adapter_config_invalid: $XDG_CONFIG_HOME/corral/config:3: \[command\] exec must start with an absolute path" <<<"$out"
# A missing hook.
config
sed -i '/^list = /d' "$XDG_CONFIG_HOME/corral/config"
out=$(new --name missing -- /bin/true 2>&1); rc=$?
check "missing hook: non-zero exit, named" bash -c \
	"[ $rc -ne 0 ] && grep -q 'adapter_config_invalid: the command adapter needs \[command\] list' <<<'$out'"
# A list hook that fails is a failed probe: isolation_unsatisfiable (30).
config
printf '#!/bin/sh\nexit 1\n' >"$H/badlist"
chmod 755 "$H/badlist"
sed -i "s|^list = .*|list = $H/badlist|" "$XDG_CONFIG_HOME/corral/config"
expect_rc 30 "failing list hook: isolation_unsatisfiable" new --name nolist -- /bin/true
config
check "no hook machine is left at the end" test -z "$(ls -A "$HS")"

finish
