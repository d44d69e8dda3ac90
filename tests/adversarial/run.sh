#!/usr/bin/env bash
# run.sh: the adversarial suite (SPEC 8, 10.2; SANDBOX.md "adversarial
# suite"). Every probe is the CMD of a real `corral new` lease -- the
# production provisioning, holder, bwrap plan, seccomp filter, cgroups and
# teardown; nothing here builds a bwrap argv. Every verdict is taken on the
# host side: canary values planted in corral's own environment, in a fake
# home, in the operator's repository (uncommitted) and outside it must not
# show up in any workspace or transcript; listeners on 127.0.0.1, [::1], an
# abstract socket and agent/docker sockets must log nothing; a git hook in
# the host repository must never fire; and after each lease, nothing of it
# is left (process, cgroup, mount, socket, uid slot) but the workspace kept
# for extraction. One line per probe, then "N passed, N failed".
#
# Needs root, bwrap, python3, jq, git, tmux. CORRAL_BIN names corral; the
# probe binary is $CORRAL_ADV_PROBE or tests/adv_probe next to the build's
# corral. ADV_ONLY=REGEX runs a subset, ADV_JOBS=N leases at once (4).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
CORRAL=${CORRAL_BIN:?CORRAL_BIN must name the corral binary}
PROBE=${CORRAL_ADV_PROBE:-$(dirname "$CORRAL")/../tests/adv_probe}
JOBS=${ADV_JOBS:-4}
ONLY=${ADV_ONLY:-.}

die() { echo "adversarial: $*" >&2; exit 1; }
# No pager, editor or prompt is ever reachable (a minbase Debian has no
# `less`; git's fallback `more` waits forever). The probes that run git on
# a terminal on purpose lift GIT_PAGER only (core.pager is what they test).
export GIT_PAGER=cat PAGER=cat EDITOR=false VISUAL=false GIT_EDITOR=false \
	GIT_TERMINAL_PROMPT=0
# Each probe's own deadline (seconds): past it, its processes are killed and
# it fails by name; the suite goes on.
PROBE_TIMEOUT=${ADV_PROBE_TIMEOUT:-180}
[ "$(id -u)" = 0 ] || die "needs root (each lease runs under its own uid)"
[ -x "$PROBE" ] || die "probe binary not found ($PROBE): set CORRAL_ADV_PROBE"
for t in jq python3 git tmux ss script; do
	command -v "$t" >/dev/null || die "$t is required"
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}"/corral-adv.XXXXXX)
STATE=$TMP/state
export CORRAL_STATE_DIR=$STATE
export XDG_CONFIG_HOME=$TMP/config
export HOME=$TMP/home
REPO=$TMP/repo
OUT=$TMP/outside
RES=$TMP/results
TMUX_SOCK=corral-adv-$$
mkdir -p "$HOME" "$XDG_CONFIG_HOME/corral" "$OUT" "$RES" "$TMP/pol"

# ---- canaries --------------------------------------------------------------
R=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
canary() { echo "$1-$R"; }
# In corral's own environment: never inside any zone (SPEC 8.3).
export CANARY_TOKEN=$(canary canary-env-token)
export AWS_SECRET_ACCESS_KEY=$(canary canary-aws-secret)
export AWS_ACCESS_KEY_ID=$(canary AKIACANARY)
export ANTHROPIC_API_KEY=$(canary canary-anthropic)
export GITHUB_TOKEN=$(canary canary-github)
export OPENAI_API_KEY=$(canary canary-openai)
export MY_PASSWORD=$(canary canary-password)
export SSH_AUTH_SOCK=$TMP/ssh-agent.sock
DOCKER_SOCK=$TMP/docker.sock
ABSTRACT=corral-adv-$R
PORT=$((20000 + RANDOM % 20000))
# In the operator's home and outside the repository.
mkdir -p "$HOME/.ssh" "$HOME/.aws" "$HOME/.claude" "$HOME/.config/gh"
canary canary-ssh-key >"$HOME/.ssh/id_ed25519"
canary canary-aws-file >"$HOME/.aws/credentials"
canary canary-claude >"$HOME/.claude/.credentials.json"
echo "https://user:$(canary canary-gitcred)@github.com" >"$HOME/.git-credentials"
canary canary-gh-hosts >"$HOME/.config/gh/hosts.yml"
printf '[credential]\n\thelper = store\n' >"$HOME/.gitconfig"
chmod 600 "$HOME/.ssh/id_ed25519"
canary canary-outside >"$OUT/secret"
# A distinct owner: a host walk that followed a symlink would change it.
chown 12345:12345 "$OUT/secret"
chmod 640 "$OUT/secret"
HOOK_FIRED=$TMP/hook-fired
HIJACK_FIRED=$TMP/hijack-fired
BARE_FIRED=$TMP/bare-fired
TIOCSTI_FIRED=$TMP/tiocsti-fired
CANARIES=$TMP/canaries
{
	env | grep -E '^(CANARY_TOKEN|AWS_SECRET_ACCESS_KEY|AWS_ACCESS_KEY_ID|ANTHROPIC_API_KEY|GITHUB_TOKEN|OPENAI_API_KEY|MY_PASSWORD)=' |
		cut -d= -f2-
	for f in "$HOME/.ssh/id_ed25519" "$HOME/.aws/credentials" \
	    "$HOME/.claude/.credentials.json" "$HOME/.config/gh/hosts.yml" \
	    "$OUT/secret"; do cat "$f"; done
	canary canary-gitcred
	canary canary-uncommitted
	canary canary-modified
} >"$CANARIES"

# ---- the operator's repository ------------------------------------------------
git init -q -b main "$REPO"
git -C "$REPO" config user.email adv@example.invalid
git -C "$REPO" config user.name adv
mkdir -p "$REPO/bin"
cp "$PROBE" "$REPO/bin/adv_probe"
cp "$HERE/probes.sh" "$REPO/probes.sh"
echo "adversarial suite repository" >"$REPO/README"
echo "committed content" >"$REPO/tracked.txt"
# A bare repository as a test fixture: the operator's own (import_bare_repo).
mkdir -p "$REPO/fixture.git/objects" "$REPO/fixture.git/refs"
echo 'ref: refs/heads/main' >"$REPO/fixture.git/HEAD"
printf '[core]\n\tbare = true\n' >"$REPO/fixture.git/config"
echo x >"$REPO/fixture.git/objects/keep"
echo x >"$REPO/fixture.git/refs/keep"
git -C "$REPO" add -A
git -C "$REPO" commit -q -m "probes"
# Uncommitted changes are never part of a lease (SPEC 6.4).
canary canary-uncommitted >"$REPO/uncommitted.txt"
canary canary-modified >"$REPO/tracked.txt"
# The hook canary: git would run these; corral never may.
for h in post-checkout post-commit post-merge pre-commit pre-push \
    reference-transaction post-rewrite pre-auto-gc; do
	printf '#!/bin/sh\ntouch %s\n' "$HOOK_FIRED" >"$REPO/.git/hooks/$h"
	chmod +x "$REPO/.git/hooks/$h"
done
BASE=$(git -C "$REPO" rev-parse HEAD)
repo_refs() { git -C "$REPO" for-each-ref --format='%(refname) %(objectname)' | grep -v '^refs/heads/corral/'; }
repo_refs >"$TMP/refs.before"
sha256sum "$REPO/.git/config" "$OUT/secret" "$HOME/.ssh/id_ed25519" \
    /usr/bin/bwrap >"$TMP/sums.before"
stat -c '%u %g %a %n' /etc/shadow /etc/passwd "$OUT/secret" >"$TMP/stat.before"

# ---- policies -------------------------------------------------------------------
# The operator's: small limits, so a runaway probe ends quickly; each
# probe's verdict reads what it left in its workspace, so a result's
# workspace is kept (it is released by default once the result is a commit).
cat >"$XDG_CONFIG_HOME/corral/policy.ini" <<'EOF'
[result]
keep_workspace = true
[limits]
wall_time = 60s
cpu_time = 50s
cpu = 1
memory = 512M
pids = 256
disk = 64M
inodes = 8192
output = 8M
file_size = 32M
tmp = 64M
home = 16M
EOF
pol() { printf '[limits]\n%s\n' "$2" >"$TMP/pol/$1.ini"; echo "$TMP/pol/$1.ini"; }

# ---- egress (issue 7): a test upstream on loopback, reached by name only ---------
# The egress probes' leases take an operator config of their own (an
# allowlist, violations recorded so each probe runs to its end) and the
# test resolver override from the environment, never from a policy.
UP_LOG=$TMP/upstream.log
mkdir -p "$TMP/www" "$TMP/config-egress/corral"
echo "upstream-$R" >"$TMP/www/index.txt"
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$TMP/www" \
    >"$UP_LOG" 2>&1 &
UPSTREAM=$!
UPORT=
for _ in $(seq 100); do
	UPORT=$(ss -ltnpH 2>/dev/null | awk -v p="pid=$UPSTREAM," \
	    'index($0, p) { n = split($4, a, ":"); print a[n]; exit }')
	[ -n "$UPORT" ] && break
	sleep 0.05
done
[ -n "$UPORT" ] || die "the test upstream did not start"
{
	cat "$XDG_CONFIG_HOME/corral/policy.ini"
	printf '[network]\nallow = allowed.test:%s, rebind.test:%s\n' "$UPORT" "$PORT"
	printf 'on_egress_violation = record\n'
} >"$TMP/config-egress/corral/policy.ini"
printf '[network]\non_egress_violation = fail\n' >"$TMP/pol/egress-fail.ini"
EGRESS_HOSTS="allowed.test=127.0.0.1,rebind.test~127.0.0.1"

# ---- host listeners, tmux (the operator's terminal) -------------------------------
python3 "$HERE/listener.py" "$TMP/listener.log" "$PORT" "$ABSTRACT" \
    "$SSH_AUTH_SOCK" "$DOCKER_SOCK" "$TMP/listener.ready" &
LISTENER=$!
: >"$TMP/listener.log"
for _ in $(seq 100); do [ -f "$TMP/listener.ready" ] && break; sleep 0.05; done
[ -f "$TMP/listener.ready" ] || die "listener did not start"
tmux -L "$TMUX_SOCK" -f /dev/null new-session -d -s adv -x 200 -y 50 \
    "env -i PATH=/usr/bin:/bin HOME=$HOME TERM=xterm bash --norc --noprofile"
tmux -L "$TMUX_SOCK" set -g set-clipboard on
tmux -L "$TMUX_SOCK" set -g allow-rename on
# A host process of another user that no lease may signal.
setpriv --reuid=65534 --regid=65534 --clear-groups sleep 100000 \
    >/dev/null 2>&1 &
SENTINEL=$!

cleanup() {
	tmux -L "$TMUX_SOCK" kill-server 2>/dev/null
	kill "$LISTENER" "$SENTINEL" "$UPSTREAM" 2>/dev/null
	# Holders of this state directory (by PID), then the workspaces' mounts.
	local pids
	pids=$("$CORRAL" ls --json 2>/dev/null | jq -r '.[] | .holder_pid // empty')
	[ -n "$pids" ] && kill -TERM $pids 2>/dev/null
	for _ in $(seq 50); do
		[ -n "$pids" ] && kill -0 $pids 2>/dev/null || break
		sleep 0.1
	done
	grep -F " $TMP/" /proc/self/mountinfo | awk '{print $5}' | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null; done
	for l in $(losetup -a 2>/dev/null | grep -F "$TMP/" | cut -d: -f1); do
		losetup -d "$l" 2>/dev/null
	done
	rm -rf "$TMP"
}
trap cleanup EXIT

# ---- helpers ------------------------------------------------------------------------
# new NAME [corral new options] -- VERB ARGS: a lease; prints its ID.
new() {
	local name=$1 opts=()
	shift
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	"$CORRAL" new --repo "$REPO" --name "$name" "${opts[@]}" -- \
	    /bin/bash /work/probes.sh "$@" 2>>"$RES/$name.err"
}
# new_cmd NAME [options] -- CMD...: a lease running CMD itself.
new_cmd() {
	local name=$1 opts=()
	shift
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	"$CORRAL" new --repo "$REPO" --name "$name" "${opts[@]}" -- "$@" \
	    2>>"$RES/$name.err"
}
# new_egress NAME [options] -- VERB ARGS: a lease with the egress config.
new_egress() {
	XDG_CONFIG_HOME=$TMP/config-egress CORRAL_TEST_EGRESS_HOSTS=$EGRESS_HOSTS \
	    new "$@"
}
show() { "$CORRAL" show "$1" --json 2>/dev/null; }
field() { show "$1" | jq -r "$2"; }
ws_of() { echo "$STATE/leases/$1/work"; }
uid_of() { field "$1" .sandbox_id | sed -n 's/^uid://p'; }
# wait_end ID [SECONDS]: the lease ended and its cgroups, sandbox, holder
# and socket are removed; else ENDED says what wait said and what is left.
ENDED=""
wait_end() {
	local i n w
	w=$("$CORRAL" wait "$1" --until result_ready,failed,cancelled \
	    --timeout "${2:-90}" 2>&1 >/dev/null; echo "exit $?")
	for i in $(seq 150); do
		n=$(show "$1" | jq -r '[.resources[] | select((.kind=="cgroup" or
		    .kind=="sandbox" or .kind=="holder" or .kind=="socket")
		    and .state!="removed") | "\(.kind) \(.state)"] | join(", ")')
		[ -z "$n" ] && return 0
		sleep 0.2
	done
	ENDED="wait: ${w//$'\n'/ }; $(show "$1" | jq -r '"\(.lease_state)/\(.activity) cleanup \(.cleanup)"'); not removed: $n"
	return 1
}
wait_prompt() { "$CORRAL" wait "$1" --until prompt --timeout "${2:-30}" >/dev/null 2>&1; }
release() { "$CORRAL" send "$1" '\r' >/dev/null 2>&1; }
# The host's look at every process of a running lease (its cgroups).
lease_pids() {
	find /sys/fs/cgroup -maxdepth 8 -type d -name "lease-$1" 2>/dev/null |
		while read -r d; do cat "$d/cgroup.procs" 2>/dev/null; done | sort -un
}
# Processes of uid that started before ms (epoch): a lease's leftovers --
# but not one in another lease's cgroup: once the slot is free another
# tenant on the host may take the uid at once, before the journal's time
# of the removal (each named with its command and cgroup).
old_procs() {
	python3 - "$1" "$2" "$3" <<'PY'
import os, re, sys, time
uid, before, lid = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
hz = os.sysconf("SC_CLK_TCK")
boot = time.time() * 1000 - float(open("/proc/uptime").read().split()[0]) * 1000
for p in os.listdir("/proc"):
    if not p.isdigit():
        continue
    try:
        st = open("/proc/%s/status" % p).read()
        u = int([l for l in st.splitlines() if l.startswith("Uid:")][0].split()[1])
        start = int(open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        continue
    if u != uid or boot + start * 1000 / hz > before + 20:
        continue
    try:
        cg = open("/proc/%s/cgroup" % p).read()
        comm = open("/proc/%s/comm" % p).read().strip()
    except OSError:
        continue
    leases = set(re.findall(r"/lease-([0-9]{8}-[0-9]{6}-[0-9]{3}-[0-9a-f]{4})\b", cg))
    if leases and lid not in leases:
        continue
    print("process %s of uid %d (%s, %s)" % (p, uid, comm,
          ",".join(sorted(leases)) or "no lease cgroup"))
PY
}
# What is left of a finished lease besides its kept workspace (SANDBOX 5.d).
leftovers() {
	local id=$1 uid=$2 end
	end=$(show "$id" | jq '[.resources[] | select(.kind=="sandbox") | .at] | max // 0')
	[ -n "$uid" ] && old_procs "$uid" "$end" "$id"
	find /sys/fs/cgroup -maxdepth 8 -type d -name "lease-$id" 2>/dev/null | sed 's/^/cgroup /'
	grep -F "$id" /proc/self/mountinfo | awk '{print $5}' |
		grep -vx "$STATE/leases/$id/work" | sed 's/^/mount /'
	[ -e "$STATE/leases/$id/holder.sock" ] && echo "socket $STATE/leases/$id/holder.sock"
	ss -xa 2>/dev/null | grep -F "$STATE/leases/$id/" | sed 's/^/socket /'
	grep -lx "$id" /run/corral/uids/slot-*/owner 2>/dev/null | sed 's/^/uid slot /'
	losetup -a 2>/dev/null | grep -F "$id" | grep -vF "$STATE/leases/$id/work" | sed 's/^/loop /'
}
# Any canary value in the lease's workspace, transcript or final screen.
leaked() {
	local id=$1
	grep -r -l -a -F -f "$CANARIES" --devices=skip "$(ws_of "$id")" \
	    "$STATE/leases/$id/transcript" "$STATE/leases/$id/final.screen" \
	    2>/dev/null
}

# check ID [STATE] [REASON] [nodone]: the common host-side verdict.
WHY=""
check() {
	local id=$1 want=${2:-result_ready} reason=${3:-} nodone=${4:-} js uid got l
	WHY=""
	[[ "$id" =~ ^[0-9]{8}-[0-9]{6}-[0-9]{3}-[0-9a-f]{4}$ ]] || { WHY="corral new failed: ${id:-$(cat "$RES"/*.err 2>/dev/null | tail -1)}"; return 1; }
	wait_end "$id" || { WHY="lease did not end and tear down in time ($ENDED)"; return 1; }
	js=$(show "$id")
	got=$(jq -r .lease_state <<<"$js")
	[[ "$got" =~ ^($want)$ ]] || { WHY="lease $got ($(jq -r .failed_reason <<<"$js")), want $want"; return 1; }
	if [ -n "$reason" ]; then
		got=$(jq -r .failed_reason <<<"$js")
		[ "$got" = "$reason" ] || { WHY="reason $got, want $reason"; return 1; }
	fi
	if [ -z "$nodone" ] && [ ! -f "$(ws_of "$id")/.probe-done" ]; then
		WHY="the probe did not run to its end"; return 1
	fi
	[ "$(jq -r .receipt.verified <<<"$js")" = true ] || { WHY="receipt chain does not verify"; return 1; }
	l=$(leaked "$id")
	[ -z "$l" ] || { WHY="canary leaked into $l"; return 1; }
	uid=$(jq -r .sandbox_id <<<"$js" | sed -n 's/^uid://p')
	# (a sandbox's outer bwrap, outside the lease's cgroups, may still be
	# exiting the moment its teardown is journaled: a deadline, not a
	# sample)
	for _ in $(seq 50); do
		l=$(leftovers "$id" "$uid")
		[ -z "$l" ] && break
		sleep 0.2
	done
	[ -z "$l" ] || { WHY="left behind: $(echo "$l" | head -3 | tr '\n' ';')"; return 1; }
	[ ! -e "$HOOK_FIRED" ] || { WHY="a git hook of the host repository ran"; return 1; }
	[ ! -s "$TMP/listener.log" ] || { WHY="host listener: $(head -1 "$TMP/listener.log")"; return 1; }
	return 0
}
# branch_ok ID: corral/<id> is the base, or corral's result commit on it.
branch_ok() {
	local tip
	tip=$(git -C "$REPO" rev-parse "refs/heads/corral/$1")
	[ "$tip" = "$BASE" ] && return 0
	[ "$(git -C "$REPO" rev-parse "$tip^")" = "$BASE" ] &&
	    [ "$(git -C "$REPO" log -1 --format='%an <%ae>' "$tip")" = "corral <corral@localhost>" ] && return 0
	WHY="corral/$1 is at $tip, not the base or corral's result commit"
	return 1
}
# gc_gone ID: `corral gc` removes a failed lease completely, never following.
gc_gone() {
	local id=$1
	timeout 30 "$CORRAL" gc "$id" >/dev/null 2>&1 || { WHY="gc failed: $("$CORRAL" gc "$id" 2>&1 | tail -1)"; return 1; }
	[ ! -e "$STATE/leases/$id" ] || { WHY="lease directory left after gc"; return 1; }
	[ ! -e "$STATE/worktrees/$id" ] || { WHY="worktree left after gc"; return 1; }
	! grep -qF "$id" /proc/self/mountinfo || { WHY="mount left after gc"; return 1; }
	! git -C "$REPO" show-ref --verify -q "refs/heads/corral/$id" || { WHY="branch left after gc"; return 1; }
	return 0
}
# Each process of the lease, as the host sees it. Inside the sandbox (its
# own pid namespace): the lease uid, no capabilities at all, no new
# privileges. The one process outside it is the outer bwrap: the lease
# uid, no effective, permitted or bounding capabilities, no new
# privileges. For the process named $2: the seccomp filter on and fds 0-2
# only.
creds_ok() {
	local id=$1 comm=${2:-} uid p s n=0 outer=0 hostpid
	uid=$(uid_of "$id")
	hostpid=$(readlink /proc/self/ns/pid)
	for p in $(lease_pids "$id"); do
		s=$(cat "/proc/$p/status" 2>/dev/null) || continue
		n=$((n + 1))
		grep -q "^Uid:[[:space:]]*$uid[[:space:]]*$uid[[:space:]]*$uid[[:space:]]*$uid" <<<"$s" || { WHY="pid $p not the lease uid"; return 1; }
		grep -q '^CapEff:[[:space:]]*0000000000000000' <<<"$s" || { WHY="pid $p has capabilities"; return 1; }
		grep -q '^CapPrm:[[:space:]]*0000000000000000' <<<"$s" || { WHY="pid $p has permitted capabilities"; return 1; }
		grep -q '^NoNewPrivs:[[:space:]]*1' <<<"$s" || { WHY="pid $p may gain privileges"; return 1; }
		if [ "$(readlink "/proc/$p/ns/pid")" = "$hostpid" ]; then
			outer=$((outer + 1))
			[ "$(cat "/proc/$p/comm")" = bwrap ] || { WHY="pid $p ($(cat "/proc/$p/comm")) runs outside the sandbox"; return 1; }
			# Not even a bounding set to regain from (issue 6d).
			grep -q '^CapBnd:[[:space:]]*0000000000000000' <<<"$s" || { WHY="the outer bwrap has a bounding set"; return 1; }
			continue
		fi
		grep -q '^CapBnd:[[:space:]]*0000000000000000' <<<"$s" || { WHY="pid $p has a bounding set"; return 1; }
		if [ -n "$comm" ] && [ "$(cat "/proc/$p/comm")" = "$comm" ]; then
			grep -q '^Seccomp:[[:space:]]*2' <<<"$s" || { WHY="pid $p runs without seccomp"; return 1; }
			local fds
			fds=$(ls "/proc/$p/fd" | sort -n | tr '\n' ' ')
			[ "$fds" = "0 1 2 " ] || { WHY="$comm holds fds: $fds"; return 1; }
		fi
	done
	[ "$n" -gt 1 ] || { WHY="no process of the lease found"; return 1; }
	[ "$outer" -le 1 ] || { WHY="$outer processes outside the sandbox"; return 1; }
	return 0
}

# ---- the probes ---------------------------------------------------------------------
# Each is a function p_NAME that returns 0 (contained) or 1 with WHY set.
# CLASS of each in PROBES below.

# mount and filesystem
p_fs_host_paths() { check "$(new fs-host-paths -- fs-host-paths "$REPO" "$OUT" "$HOME")"; }
p_fs_uncommitted() {
	local id
	id=$(new fs-uncommitted -- fs-uncommitted)
	check "$id" || return 1
	local ws
	ws=$(ws_of "$id")
	[ ! -e "$ws/uncommitted.txt" ] || { WHY="uncommitted file in the workspace"; return 1; }
	[ "$(cat "$ws/tracked.txt")" = "committed content" ] || { WHY="workspace has the uncommitted edit"; return 1; }
}
p_fs_search() { check "$(new fs-search -- fs-search)"; }
p_fs_write_system() {
	local id d
	id=$(new fs-write-system -- fs-write-system "$R")
	check "$id" || return 1
	for d in / /usr /usr/bin /etc /bin /lib /opt /var /run /home /root /srv /mnt /tmp; do
		[ ! -e "$d/adv-written-$R" ] && [ ! -e "$d/adv-dir-$R" ] || { WHY="$d/adv-written-$R exists on the host"; return 1; }
	done
	[ ! -e "/usr/bin/adv-$R" ] && [ -x /usr/bin/env ] && [ -x /usr/bin/true ] || { WHY="/usr changed on the host"; return 1; }
}
p_fs_proc_root() { check "$(new fs-proc-root -- fs-proc-root "$REPO" "$OUT")"; }
p_fs_other_lease() {
	# SPEC 10.2: two concurrent leases; B attacks A's workspace.
	local a b wsa token
	a=$(new fs-other-a -- fs-other-hold)
	[ -n "$a" ] || { WHY="lease A did not start"; return 1; }
	wait_prompt "$a" || { WHY="lease A never held"; return 1; }
	wsa=$(ws_of "$a")
	token=$(cat "$wsa/secret-a")
	[ -n "$token" ] || { WHY="lease A wrote no token"; return 1; }
	b=$(new fs-other-b -- fs-other-write "$wsa")
	check "$b" || { release "$a"; return 1; }
	[ "$(uid_of "$a")" != "$(uid_of "$b")" ] || { WHY="A and B share a uid"; release "$a"; return 1; }
	if grep -r -q -a -F "$token" --devices=skip "$(ws_of "$b")" "$STATE/leases/$b/transcript"; then
		WHY="B read A's token"; release "$a"; return 1
	fi
	[ ! -e "$wsa/pwned-by-b" ] || { WHY="B wrote into A's workspace"; release "$a"; return 1; }
	[ "$(cat "$wsa/secret-a")" = "$token" ] || { WHY="A's file changed"; release "$a"; return 1; }
	release "$a"
	check "$a"
}
p_fs_links() {
	local id
	id=$(new fs-links -- fs-links "$OUT" "$REPO")
	check "$id" failed "exit 1" || return 1
	# The holder handed the workspace back to root without following.
	[ "$(stat -c %u "$(ws_of "$id")/link-shadow" 2>/dev/null)" = 0 ] &&
	    [ "$(stat -c '%u %a' "$(ws_of "$id")")" = "0 700" ] || { WHY="workspace not handed back"; return 1; }
	stat -c '%u %g %a %n' /etc/shadow /etc/passwd "$OUT/secret" | cmp -s - "$TMP/stat.before" || { WHY="a host file's owner or mode changed"; return 1; }
	gc_gone "$id" || return 1
	[ -f "$OUT/secret" ] && [ -f /etc/shadow ] && [ -d "$OUT" ] || { WHY="gc followed a symlink out"; return 1; }
	sha256sum -c --quiet "$TMP/sums.before" >/dev/null 2>&1 || { WHY="a host file changed"; return 1; }
}
p_fs_dev() {
	local id
	id=$(new fs-dev -- fs-dev "$R")
	check "$id" || return 1
	! dmesg 2>/dev/null | grep -q "adv-kmsg-$R" || { WHY="wrote to the host's kernel log"; return 1; }
	[ ! -e "$(ws_of "$id")/adv-null" ] || { WHY="mknod made a device node"; return 1; }
}
p_fs_privileges() {
	local id
	id=$(new fs-setuid -- fs-setuid "$R")
	wait_prompt "$id" || { WHY="probe never held"; return 1; }
	creds_ok "$id" adv_probe || { release "$id"; return 1; }
	release "$id"
	check "$id" || return 1
	[ ! -e "$(ws_of "$id")/root-$R" ] && [ ! -e "$(ws_of "$id")/unshare-root-$R" ] || { WHY="a setuid or userns trick worked"; return 1; }
}
p_fs_fds() {
	local id
	id=$(new_cmd fs-fds -- /work/bin/adv_probe fds)
	wait_prompt "$id" || { WHY="probe never held"; return 1; }
	creds_ok "$id" adv_probe || { release "$id"; return 1; }
	release "$id"
	check "$id" result_ready "" nodone
}

# credentials
p_cred_env() {
	local id
	id=$(new cred-env -- cred-env)
	check "$id" || return 1
	grep -q '^HOME=/home/sbx$' "$(ws_of "$id")/env.txt" || { WHY="no environment seen (the probe did not look)"; return 1; }
}
p_cred_cmdline() {
	# The sandbox's pid 1 is bwrap: its argv, read from the host, holds
	# nothing of the policy (SANDBOX.md 0.8).
	local id p cl found=0
	id=$(new_cmd cred-cmdline -- /work/bin/adv_probe hold)
	wait_prompt "$id" || { WHY="probe never held"; return 1; }
	for p in $(lease_pids "$id"); do
		[ "$(cat "/proc/$p/comm")" = bwrap ] || continue
		found=1
		cl=$(tr '\0' ' ' <"/proc/$p/cmdline")
		case "$cl" in
		*--setenv*|*--ro-bind*|*/home/sbx*|*canary*) WHY="bwrap argv: $cl"; release "$id"; return 1 ;;
		esac
	done
	release "$id"
	[ "$found" = 1 ] || { WHY="no bwrap process seen"; return 1; }
	check "$id" result_ready "" nodone
}
p_cred_home() { check "$(new cred-home -- cred-home "$HOME")"; }
p_cred_sockets() { check "$(new cred-sockets -- cred-sockets "$SSH_AUTH_SOCK" "$DOCKER_SOCK")"; }
p_cred_git() {
	local id
	id=$(new cred-git -- cred-git)
	check "$id"
}
p_cred_keyring() {
	local id uid
	id=$(new_cmd cred-keyring -- /work/bin/adv_probe keyring)
	wait_prompt "$id" || { WHY="probe never held"; return 1; }
	uid=$(uid_of "$id")
	if grep -q "^ *$uid:" /proc/key-users; then
		WHY="the lease uid owns kernel keys"; release "$id"; return 1
	fi
	release "$id"
	check "$id" result_ready "" nodone
}

# network
p_net_connect() { check "$(new net-connect -- net-connect "$PORT" "$ABSTRACT")"; }
p_net_dns() { check "$(new net-dns -- net-dns "$PORT")"; }
p_net_namespace() {
	local id p dev
	id=$(new_cmd net-namespace -- /work/bin/adv_probe hold)
	wait_prompt "$id" || { WHY="probe never held"; return 1; }
	for p in $(lease_pids "$id"); do
		# The outer bwrap is the host's side of the sandbox.
		[ "$(readlink "/proc/$p/ns/pid")" = "$(readlink /proc/self/ns/pid)" ] && continue
		[ "$(readlink "/proc/$p/ns/net")" != "$(readlink /proc/self/ns/net)" ] || { WHY="pid $p shares the host network"; release "$id"; return 1; }
		dev=$(awk -F: 'NR > 2 {gsub(/ /, "", $1); print $1}' "/proc/$p/net/dev" | tr '\n' ' ')
		[ "$dev" = "lo " ] || { WHY="interfaces: $dev"; release "$id"; return 1; }
	done
	release "$id"
	check "$id" result_ready "" nodone
}
p_net_vsock() {
	local id
	id=$(new_cmd net-vsock -- /work/bin/adv_probe vsock "$PORT")
	wait_prompt "$id" || { WHY="probe never held"; return 1; }
	if ss -a --vsock -p 2>/dev/null | grep -q adv_probe; then
		WHY="the sandbox holds a vsock socket"; release "$id"; return 1
	fi
	release "$id"
	check "$id" result_ready "" nodone
}
p_net_io_uring() {
	local id p
	id=$(new_cmd net-io-uring -- /work/bin/adv_probe uring)
	wait_prompt "$id" || { WHY="probe never held"; return 1; }
	for p in $(lease_pids "$id"); do
		if ls -l "/proc/$p/fd" 2>/dev/null | grep -q io_uring; then
			WHY="the sandbox holds an io_uring"; release "$id"; return 1
		fi
	done
	release "$id"
	check "$id" result_ready "" nodone
}

# egress (issue 7): every verdict from the host side -- the proxy's
# receipt lines (written by the holder, outside the zone), the test
# upstream's request log and the suite's listener, which must see nothing.
# egress_denied ID REASON TARGET_REGEX: the lease recorded exactly these
# refusals, every one before any lookup or dial, and no allowed tunnel.
egress_denied() {
	local id=$1 reason=$2 re=$3 js n bad
	check "$id" || return 1
	js=$(show "$id")
	n=$(jq --arg r "$reason" --arg t "$re" '[.receipts[] | select(.kind=="egress"
	    and .fields.verdict=="deny" and .fields.reason==$r
	    and (.fields.target | test($t)))] | length' <<<"$js")
	[ "$n" -ge 1 ] || { WHY="no $reason refusal of $re in the receipt"; return 1; }
	bad=$(jq -c '[.receipts[] | select(.kind=="egress" and
	    (.fields.verdict=="allow" or .fields.verdict=="close"))] | .[0] // empty' <<<"$js")
	[ -z "$bad" ] || { WHY="the proxy dialled: $bad"; return 1; }
	return 0
}
# Anything the upstream saw but the positive control's request: a breach.
upstream_foreign() { grep -v -e '"GET /index.txt HTTP' -e '^Serving HTTP' "$UP_LOG" | grep -m1 .; }
p_egress_allowed() { # the positive control: by name, through the proxy
	local id js
	id=$(new_egress egress-allowed -- egress-curl "http://allowed.test:$UPORT/index.txt" -p)
	check "$id" || return 1
	grep -q "upstream-$R" "$(ws_of "$id")/listing" || { WHY="the upstream's body never arrived"; return 1; }
	js=$(show "$id")
	[ "$(jq -r '[.receipts[] | select(.kind=="egress" and .fields.verdict=="allow") | "\(.fields.address) \(.fields.test_override)"][0]' <<<"$js")" = "127.0.0.1:$UPORT true" ] || { WHY="no allowed CONNECT in the receipt"; return 1; }
	[ "$(jq -r '[.receipts[] | select(.kind=="egress_proxy") | .fields.test_override][0]' <<<"$js")" = "$EGRESS_HOSTS" ] || { WHY="the test override is not in the receipt"; return 1; }
}
p_egress_name() {
	local id
	id=$(new_egress egress-name -- egress-curl "http://evil.test:$UPORT/evil.txt" -p)
	egress_denied "$id" blocked-by-allowlist "^evil\\.test:" || return 1
	[ -z "$(upstream_foreign)" ] || { WHY="the upstream saw: $(upstream_foreign)"; return 1; }
}
p_egress_port() { # an allowlisted name on another port (the listener's)
	egress_denied "$(new_egress egress-port -- egress-curl "http://allowed.test:$PORT/" -p)" \
	    blocked-by-allowlist "^allowed\\.test:$PORT$"
}
p_egress_suffix() {
	egress_denied "$(new_egress egress-suffix -- egress-curl "http://allowed.test.evil:$UPORT/" -p)" \
	    blocked-by-allowlist "^allowed\\.test\\.evil:"
}
p_egress_ip() { # IP literals in three spellings, the listener's port
	local id
	id=$(new_egress egress-ip -- egress-curl "http://127.0.0.1:$PORT/" -p)
	egress_denied "$id" ip-literal "^127\\.0\\.0\\.1:$PORT$"
}
p_egress_rebind() { # an allowlisted name that resolves to 127.0.0.1
	# (the test resolver's answer for the name, vetted as a real lookup's:
	# a minbase root has no /etc/hosts, so "localhost" may not resolve)
	egress_denied "$(new_egress egress-rebind -- egress-curl "http://rebind.test:$PORT/" -p)" \
	    non-global-address "^rebind.test:$PORT$"
}
p_egress_noproxy() { # --noproxy '*' and raw TCP, to the upstream and the listener
	local id
	id=$(new_egress egress-noproxy -- egress-raw 127.0.0.1 "$UPORT" "$PORT")
	check "$id" || return 1
	[ -z "$(upstream_foreign)" ] || { WHY="the upstream saw: $(upstream_foreign)"; return 1; }
	[ "$(show "$id" | jq '[.receipts[] | select(.kind=="egress")] | length')" = 0 ] || { WHY="the proxy saw traffic it should not"; return 1; }
}
p_egress_dns() { # a secret-bearing name: denied before any lookup
	local secret="dnsleak$R" id js
	id=$(new_egress egress-dns -- egress-dns "$secret")
	egress_denied "$id" blocked-by-allowlist "^$secret\\.allowed\\.test:443$" || return 1
	js=$(show "$id")
	# No lookup happened on the host: no verdict but the refusal.
	[ "$(jq '[.receipts[] | select(.kind=="egress" and .fields.verdict!="deny")] | length' <<<"$js")" = 0 ] || { WHY="the proxy went past the decision"; return 1; }
	grep -q "could not resolve\|Could not resolve\|Name or service\|Temporary failure\|403" "$(ws_of "$id")/listing" || { WHY="the probe did not look"; return 1; }
}
# A sibling lease with egress holds at its prompt; the probe tries its
# holder and proxy sockets from another lease.
p_egress_sibling() {
	local sib id js
	sib=$(XDG_CONFIG_HOME=$TMP/config-egress CORRAL_TEST_EGRESS_HOSTS=$EGRESS_HOSTS \
	    new_cmd egress-sibling-held -- /work/bin/adv_probe hold)
	wait_prompt "$sib" || { WHY="the sibling never held"; return 1; }
	id=$(new_egress egress-sibling -- egress-sock "$STATE/leases/$sib/holder.sock" \
	    /run/corral/rt/egress/proxy.sock "/proc/$(field "$sib" .holder_pid)/root/run/corral/rt/egress/proxy.sock")
	check "$id"; local rc=$?
	release "$sib"
	check "$sib" result_ready "" nodone || return 1
	[ "$rc" = 0 ] || return 1
	js=$(show "$sib")
	[ "$(jq '[.receipts[] | select(.kind=="egress")] | length' <<<"$js")" = 0 ] || { WHY="the sibling's proxy saw a connection"; return 1; }
	! grep -q "^connected" "$(ws_of "$id")/listing" || { WHY="a foreign socket accepted"; return 1; }
}
p_egress_flood() { # a flood of refused attempts: the journal stays bounded, at a rate
	local id js n t0=$SECONDS
	id=$(new_egress egress-flood -- egress-flood 5000)
	check "$id" || return 1
	grep -q '^answered 5000$' "$(ws_of "$id")/listing" || { WHY="the flood did not run: $(tail -1 "$(ws_of "$id")/listing")"; return 1; }
	js=$(show "$id")
	n=$(jq '[.receipts[] | select(.kind=="egress")] | length' <<<"$js")
	[ "$n" -le 4096 ] || { WHY="$n egress receipt lines for one lease (no cap)"; return 1; }
	# a burst of 256, then 16 a second: never a transaction per attempt,
	# which kept other writers of the journal waiting past their timeout
	[ "$n" -le $((256 + 16 * (SECONDS - t0 + 1))) ] || { WHY="$n egress receipt lines in $((SECONDS - t0)) s (no rate)"; return 1; }
	[ "$(jq '[.receipts[] | select(.kind=="egress_summary") | .fields.denied] | max' <<<"$js")" -ge 5000 ] || { WHY="the summary does not count every attempt"; return 1; }
}
p_egress_noegress() { # a lease without an allowlist: no proxy socket at all
	local id
	id=$(new egress-none -- egress-sock /run/egress/proxy.sock)
	check "$id" || return 1
	! grep -q "^connected" "$(ws_of "$id")/listing" || { WHY="a proxy socket accepted"; return 1; }
}
p_egress_fail() { # on_egress_violation = fail: the denial ends the lease
	local id
	id=$(new_egress egress-fail --policy "$TMP/pol/egress-fail.ini" -- \
	    egress-curl "http://evil.test:$UPORT/" -p)
	check "$id" failed hermeticity_violation nodone || return 1
	[ "$(show "$id" | jq '[.receipts[] | select(.kind=="hermeticity_violation")] | length')" = 1 ] || { WHY="no hermeticity_violation in the receipt"; return 1; }
}

# command path and terminal
# In the operator's terminal (a tmux pane running bash), as an operator would.
# What the operator's shell needs to reach this suite's state (no canary).
PANE_ENV="CORRAL_STATE_DIR=$STATE XDG_CONFIG_HOME=$XDG_CONFIG_HOME"
for v in CORRAL_SBX_INIT CORRAL_SBX_PROBE; do
	[ -n "${!v:-}" ] && PANE_ENV="$PANE_ENV $v=${!v}"
done
pane() {
	tmux -L "$TMUX_SOCK" send-keys -t adv -l "$*"
	tmux -L "$TMUX_SOCK" send-keys -t adv Enter
}
pane_new() { # OUTFILE ARGS...: corral new typed into the pane
	local out=$1
	shift
	pane "$PANE_ENV $CORRAL new --repo $REPO $* >$out 2>&1"
	local i
	for i in $(seq 200); do [ -s "$out" ] && break; sleep 0.05; done
	head -1 "$out"
}
p_term_tiocsti() {
	local id
	id=$(pane_new "$TMP/tiocsti.id" --name term-tiocsti -- \
	    /work/bin/adv_probe tiocsti "\$'touch $TIOCSTI_FIRED\\n'")
	check "$id" result_ready "" nodone || return 1
	[ ! -e "$TIOCSTI_FIRED" ] || { WHY="injected input ran in the operator's terminal"; return 1; }
	! grep -qa "$TIOCSTI_FIRED" "$STATE/leases/$id/transcript" || { WHY="TIOCSTI reached the lease's own input"; return 1; }
}
p_term_tiocsti_high() {
	local id
	id=$(new_cmd term-tiocsti-high -- /work/bin/adv_probe tiocsti "echo injected-high-$R" high)
	check "$id" result_ready "" nodone || return 1
	! grep -qa "injected-high-$R" "$STATE/leases/$id/transcript" || { WHY="TIOCSTI with high bits was accepted"; return 1; }
}
p_term_console() {
	local id
	id=$(new term-console -- term-console "$R")
	check "$id" || return 1
	grep -qa "console-$R" "$STATE/leases/$id/transcript" || { WHY="/dev/console is not the lease's own terminal"; return 1; }
	! dmesg 2>/dev/null | grep -q "host-$R\|console-$R" || { WHY="reached the host's console"; return 1; }
	! tmux -L "$TMUX_SOCK" capture-pane -p -t adv | grep -q "console-$R\|host-$R" || { WHY="reached the operator's terminal"; return 1; }
}
p_term_escapes() {
	local id out
	id=$(new term-escapes -- term-escapes "$R")
	check "$id" || return 1
	out=$("$CORRAL" screen "$id"; "$CORRAL" show "$id"; "$CORRAL" ls --all)
	! grep -q $'\033\|\a' <<<"$out" || { WHY="raw escape sequences reach the operator"; return 1; }
	grep -q "adv-visible-$R" <<<"$out" || { WHY="the probe's output never showed"; return 1; }
	pane "export $PANE_ENV; $CORRAL screen $id; $CORRAL show $id; $CORRAL ls --all"
	sleep 0.5
	[ "$(tmux -L "$TMUX_SOCK" display -p -t adv '#{pane_title}')" != "adv-title-$R" ] || { WHY="the agent set the operator's title"; return 1; }
	! tmux -L "$TMUX_SOCK" show-buffer 2>/dev/null | grep -q "adv-clip-$R\|adv-pass-$R" || { WHY="the agent set the operator's clipboard"; return 1; }
}
p_term_killall() {
	local id
	id=$(new_cmd term-killall -- /work/bin/adv_probe killall)
	# kill -1 inside takes the helper with it: the lease may fail.
	check "$id" "result_ready|failed" "" nodone || return 1
	kill -0 "$SENTINEL" 2>/dev/null || { WHY="a host process was killed"; return 1; }
	kill -0 "$LISTENER" 2>/dev/null || { WHY="the host listener was killed"; return 1; }
}

# resources: each capped, a named reason, nothing left (SPEC 8.4)
p_res_forkbomb() { check "$(new_cmd res-forkbomb --policy "$(pol forkbomb 'pids = 48')" -- /work/bin/adv_probe forkbomb)" failed limit_pids nodone; }
p_res_memhog() { check "$(new_cmd res-memhog --policy "$(pol memhog 'memory = 96M')" -- /work/bin/adv_probe memhog)" failed limit_memory nodone; }
p_res_diskfill() {
	local id
	id=$(new_cmd res-diskfill --policy "$(pol diskfill 'disk = 24M')" -- /work/bin/adv_probe diskfill /work/fill)
	check "$id" failed limit_disk nodone || return 1
	[ "$(du -sk "$(ws_of "$id")" | cut -f1)" -le 25600 ] || { WHY="workspace grew past its limit"; return 1; }
}
p_res_inodes() { check "$(new_cmd res-inodes --policy "$(pol inodes 'inodes = 1024')" -- /work/bin/adv_probe inodes /work/many)" failed limit_disk nodone; }
p_res_bigfile() { check "$(new_cmd res-bigfile --policy "$(pol bigfile 'file_size = 4M')" -- /work/bin/adv_probe diskfill /work/big)" failed limit_file_size nodone; }
p_res_spin() { check "$(new_cmd res-spin --policy "$(pol spin 'cpu_time = 3s
cpu = 0.5')" -- /work/bin/adv_probe spin)" failed limit_cpu_time nodone; }
p_res_sleep() { check "$(new res-sleep --policy "$(pol sleep 'wall_time = 3s')" -- res-sleep)" failed limit_wall_time nodone; }
p_res_flood() {
	local id t0 t1
	id=$(new_cmd res-flood --policy "$(pol flood 'output = 512K')" -- /work/bin/adv_probe flood)
	# The host stays responsive while the PTY floods.
	t0=$(date +%s%N); "$CORRAL" ls >/dev/null 2>&1; t1=$(date +%s%N)
	[ $(( (t1 - t0) / 1000000 )) -lt 3000 ] || { WHY="corral ls took $(( (t1 - t0) / 1000000 )) ms"; return 1; }
	check "$id" failed limit_output nodone || return 1
	[ "$(stat -c %s "$STATE/leases/$id/transcript")" -le 524288 ] || { WHY="transcript past the cap"; return 1; }
}
p_res_daemon() {
	local id
	id=$(new res-daemon -- res-daemon)
	check "$id"
}
p_res_chmod000() {
	local id
	id=$(new res-chmod000 -- res-chmod000)
	check "$id" failed "exit 1" || return 1
	gc_gone "$id"
}
p_res_deep() {
	local id
	id=$(new res-deep -- res-deep)
	check "$id" failed "exit 1" || return 1
	[ "$(stat -c '%u %a' "$(ws_of "$id")")" = "0 700" ] || { WHY="the workspace's top is not root's 0700"; return 1; }
	gc_gone "$id"
}
p_res_fifo() {
	local id
	id=$(new res-fifo -- res-fifo)
	check "$id" failed "exit 1" || return 1
	gc_gone "$id"
}

# supply chain
p_supply_hashes() {
	local id js
	id=$(new_cmd supply-hashes -- /usr/bin/env true)
	check "$id" result_ready "" nodone || return 1
	js=$(show "$id" | jq '.receipts[] | select(.kind=="preflight") | .fields')
	[ "$(jq -r .bwrap_path <<<"$js")" = /usr/bin/bwrap ] || { WHY="bwrap path not recorded"; return 1; }
	[ "$(jq -r .bwrap_sha256 <<<"$js")" = "$(sha256sum /usr/bin/bwrap | cut -d' ' -f1)" ] || { WHY="bwrap hash differs from the host's"; return 1; }
	[ "$(jq -r .agent_sha256 <<<"$js")" = "$(sha256sum /usr/bin/env | cut -d' ' -f1)" ] || { WHY="agent hash differs from the host's"; return 1; }
	[ "$(jq -r .filter_sha256 <<<"$js" | wc -c)" = 65 ] || { WHY="no seccomp filter hash"; return 1; }
	[ "$(jq -r .policy_sha256 <<<"$js" | wc -c)" = 65 ] || { WHY="no policy hash"; return 1; }
	[ -n "$(jq -r .kernel <<<"$js")" ] || { WHY="no kernel recorded"; return 1; }
}
p_supply_hijack() {
	local id
	id=$(new supply-hijack -- supply-hijack "$HIJACK_FIRED")
	check "$id" failed "exit 1" || return 1
	# The host side works on this workspace: show, screen, gc.
	"$CORRAL" show "$id" >/dev/null 2>&1
	"$CORRAL" screen "$id" >/dev/null 2>&1
	gc_gone "$id" || return 1
	[ ! -e "$HIJACK_FIRED" ] || { WHY="the host ran a program the agent planted"; return 1; }
}
p_supply_tamper() {
	local id
	id=$(new supply-tamper -- supply-tamper)
	# The tampered workspace binary (mode 777) is quarantined by the
	# result gate: the lease fails result_invalid (SPEC 7).
	check "$id" failed result_invalid || return 1
	sha256sum -c --quiet "$TMP/sums.before" >/dev/null 2>&1 || { WHY="a host binary or file changed"; return 1; }
	[ ! -e /etc/ld.so.preload ] || ! grep -q tampered /etc/ld.so.preload || { WHY="ld.so.preload written"; return 1; }
}

# side effects
p_side_git_config() {
	local id ws cfg
	id=$(new side-git-config -- true)
	check "$id" || return 1
	ws=$(ws_of "$id")
	cfg=$(git config --file "$ws/.git/config" -l)
	! grep -q '^remote\.' <<<"$cfg" || { WHY="the workspace has a remote"; return 1; }
	grep -qx 'core.hookspath=/dev/null' <<<"$cfg" || { WHY="hooksPath is not /dev/null"; return 1; }
	grep -qx 'credential.helper=' <<<"$cfg" || { WHY="credential.helper is not empty"; return 1; }
	[ ! -e "$ws/.git/objects/info/alternates" ] || { WHY="alternates present"; return 1; }
	[ "$(git -C "$ws" rev-parse HEAD 2>/dev/null)" = "$BASE" ] || { WHY="workspace HEAD is not the base"; return 1; }
	[ "$(find "$ws/.git/objects" -type f -links +1 | wc -l)" = 0 ] || { WHY="hardlinked objects"; return 1; }
}
p_side_push() {
	local id
	id=$(new side-push -- side-push "$REPO")
	check "$id" || return 1
	repo_refs | cmp -s - "$TMP/refs.before" || { WHY="the host repository's refs changed"; return 1; }
}
p_side_gitdir() {
	local id
	id=$(new side-gitdir -- side-gitdir "$REPO" "$HOOK_FIRED")
	check "$id" || return 1
	repo_refs | cmp -s - "$TMP/refs.before" || { WHY="host refs changed"; return 1; }
	# The lease branch is the base or corral's own result commit on it
	# (SPEC 7), never a commit or ref of the agent's.
	branch_ok "$id" || return 1
	sha256sum -c --quiet "$TMP/sums.before" >/dev/null 2>&1 || { WHY="host repository config changed"; return 1; }
}
p_side_worktree() {
	local id wt
	id=$(new side-worktree -- side-worktree "$STATE/worktrees/X" "$STATE")
	check "$id" || return 1
	wt=$STATE/worktrees/$id
	branch_ok "$id" || return 1
	[ "$(git -C "$wt" rev-parse HEAD)" = "$(git -C "$REPO" rev-parse "refs/heads/corral/$id")" ] || { WHY="review worktree is not at the lease branch"; return 1; }
	[ ! -e "$wt/pwned" ] && ! grep -q pwned "$wt/README" || { WHY="the sandbox wrote the review worktree"; return 1; }
	[ -z "$(git -C "$wt" status --porcelain)" ] || { WHY="review worktree changed"; return 1; }
	[ "$(show "$id" | jq -r .receipt.verified)" = true ] || { WHY="journal damaged"; return 1; }
}

# result import (completed by the results issue)
p_import_dotgit_link() {
	local id
	id=$(new import-dotgit-link -- side-dotgit-link "$REPO")
	check "$id" failed "exit 1" || return 1
	repo_refs | cmp -s - "$TMP/refs.before" || { WHY="host refs changed through a .git symlink"; return 1; }
	gc_gone "$id" || return 1
	[ -d "$REPO/.git" ] && git -C "$REPO" rev-parse HEAD >/dev/null 2>&1 || { WHY="gc removed the host repository's .git"; return 1; }
}
p_import_symlinks() {
	local id
	id=$(new import-symlinks -- fs-links "$OUT" "$REPO")
	check "$id" failed "exit 1" || return 1
	gc_gone "$id" || return 1
	[ -f "$OUT/secret" ] && [ "$(stat -c %u "$OUT/secret")" = 12345 ] || { WHY="a symlink was followed out of the workspace"; return 1; }
	[ -d "$REPO/.git" ] || { WHY="the host repository was removed"; return 1; }
}

p_import_bare_repo() {
	# A nested bare repository is a git directory by another spelling
	# (SPEC 7.2): quarantined, never materialised. Host side: git run by
	# the reviewer in the review worktree (a terminal, so the pager runs)
	# must not run the agent's config.
	local id wt d
	id=$(new import-bare-repo -- import-bare-repo "$BARE_FIRED")
	check "$id" "result_ready|failed" || return 1
	wt=$STATE/worktrees/$id
	for d in evil evil2 evil3/x/refs; do
		[ -d "$wt/$d" ] || continue
		(cd "$wt/$d" && env -u GIT_PAGER timeout -k 5 30 script -qec \
		    "git log -1; git branch" /dev/null </dev/null >/dev/null 2>&1)
	done
	[ ! -e "$BARE_FIRED" ] || { WHY="the reviewer's git ran the agent's core.pager from a nested bare repository"; return 1; }
	[ "$(field "$id" .lease_state)" = failed ] && [ "$(field "$id" .failed_reason)" = result_invalid ] || { WHY="a nested bare repository was materialised ($(field "$id" .lease_state))"; return 1; }
	"$CORRAL" review "$id" 2>&1 | grep -q 'gitlink .*evil' || { WHY="review does not name the nested repository"; return 1; }
}
p_import_tool_config() {
	# Tool config the operator's next build or cd executes is flagged
	# for explicit review like the build files it drives (SPEC 7.2).
	local id f bad=
	id=$(new import-tool-config -- import-tool-config "$HIJACK_FIRED")
	check "$id" || return 1
	for f in .cargo/config.toml .yarnrc.yml .yarn/releases/evil.cjs \
	    .npmrc .mvn/jvm.config gradle/wrapper/gradle-wrapper.properties \
	    rust-toolchain.toml mise.toml Directory.Build.props \
	    .bundle/config shell.nix; do
		"$CORRAL" review "$id" --json | jq -e --arg p "$f" \
		    '.manifest.files[] | select(.path == $p) | .flags | length > 0' \
		    >/dev/null || bad="$bad $f"
	done
	[ -z "$bad" ] || { WHY="not flagged for review:$bad"; return 1; }
	[ ! -e "$HIJACK_FIRED" ] || { WHY="the host ran the agent's tool config"; return 1; }
}
p_import_bare_fixture() {
	# The base's own bare fixture is no finding, but a rewrite of its
	# config is (the same pager, from the reviewer's side).
	local id wt
	id=$(new import-bare-fixture -- import-bare-fixture "$BARE_FIRED")
	check "$id" "result_ready|failed" || return 1
	wt=$STATE/worktrees/$id
	if [ -d "$wt/fixture.git" ]; then
		(cd "$wt/fixture.git" && env -u GIT_PAGER timeout -k 5 30 script -qec \
		    "git log -1; git branch" /dev/null </dev/null >/dev/null 2>&1)
	fi
	[ ! -e "$BARE_FIRED" ] || { WHY="the reviewer's git ran the agent's core.pager from the base's bare fixture"; return 1; }
	[ "$(field "$id" .failed_reason)" = result_invalid ] || { WHY="a rewritten bare fixture's config was materialised"; return 1; }
}

# ---- the exec zone (issue 15): checks whose script the agent rewrote ----------------
# The lease's policy declares the check xz = sh xz.sh, and the agent writes
# xz.sh. Judged on the host: the lease's result is ready, the check failed
# naming the limit, and nothing of any check run is left (cgroups, uid
# slot, mount, copy, a journaled resource not removed).
# xz_pol NAME LIMIT [TIMEOUT]: that policy, with one limit
xz_pol() {
	printf '[limits]\n%s\n[checks]\ntimeout = %s\nxz = sh xz.sh\n' "$2" \
	    "${3:-20s}" >"$TMP/pol/xz-$1.ini"
	echo "$TMP/pol/xz-$1.ini"
}
xz_check() { # ID LIMIT
	local id=$1 got l
	check "$id" || return 1
	got=$(field "$id" '.result.checks[] | select(.name == "xz") |
	    "\(.status) \(.detail)"')
	[ "$got" = "fail limit: $2" ] || { WHY="check: $got; want fail limit: $2"; return 1; }
	l=$( { find /sys/fs/cgroup -maxdepth 8 -type d -name "lease-$id.*"
	    grep -l "^$id\." /run/corral/uids/slot-*/owner
	    grep -F "$id/result" /proc/self/mountinfo
	    find /run/corral -maxdepth 2 -name "$id*"; } 2>/dev/null)
	[ -z "$l" ] || { WHY="a check run left: $(echo "$l" | head -2 | tr '\n' ';')"; return 1; }
	show "$id" | jq -e '[.resources[] | select((.identity |
	    startswith("check:")) and .state != "removed")] | length == 0' \
	    >/dev/null || { WHY="a check run's resources are not all removed"; return 1; }
}
p_xz_memhog() { xz_check "$(new xz-memhog --policy "$(xz_pol memhog 'memory = 96M')" -- xz-write /work/bin/adv_probe memhog)" memory; }
p_xz_forkbomb() { xz_check "$(new xz-forkbomb --policy "$(xz_pol forkbomb 'pids = 48' 8s)" -- xz-write /work/bin/adv_probe forkbomb)" pids; }
p_xz_diskfill() { xz_check "$(new xz-diskfill --policy "$(xz_pol diskfill 'disk = 24M')" -- xz-write /work/bin/adv_probe diskfill /work/fill)" disk; }
p_xz_inodes() { xz_check "$(new xz-inodes --policy "$(xz_pol inodes 'inodes = 1024')" -- xz-write /work/bin/adv_probe inodes /work/many)" inodes; }
p_xz_sleep() { xz_check "$(new xz-sleep --policy "$(xz_pol sleep 'wall_time = 60s' 3s)" -- xz-write sleep 1e9)" timeout; }
p_xz_daemon() {
	# A double-forked daemon the check leaves behind is gone with the run.
	local id
	id=$(new xz-daemon --policy "$(xz_pol daemon 'pids = 64')" -- xz-write \
	    '( setsid sleep 7411 & ) ; exit 0')
	check "$id" || return 1
	[ "$(field "$id" '.result.checks[0].status')" = pass ] || { WHY="the check did not pass"; return 1; }
	! pgrep -x -f 'sleep 7411' >/dev/null || { WHY="the check's daemon outlived it"; return 1; }
}

# ---- bookkeeping (issue 15): what an agent can make the host write ------------------
p_bk_da_flood() {
	# DA queries (ESC [ c) never read: the dropped replies are counted,
	# not each written, and the lease's journal stays small.
	local id j drops n bytes
	id=$(new_cmd bk-da-flood -- /bin/sh -c 'stty raw -echo; yes "$(printf "\033[c")" | head -c 1000000; exit 0')
	check "$id" result_ready "" nodone || return 1
	j=$(show "$id")
	drops=$(jq '[.receipts[] | select(.kind == "input")] | length' <<<"$j")
	n=$(jq '.receipts | length' <<<"$j")
	bytes=$(jq '[.receipts[], .transitions[] | tojson | length] | add' <<<"$j")
	[ "$drops" -le 64 ] && [ "$n" -le 400 ] && [ "$bytes" -le 524288 ] ||
	    { WHY="$drops input receipts, $n receipts, $bytes bytes of journal"; return 1; }
}
p_bk_notify_flood() {
	# blocked/working flipped 20 times a second for 4 s: the operator's
	# [notify] hook runs at most once per interval, never twice at once.
	local id calls=$TMP/notify-calls
	id=$(XDG_CONFIG_HOME=$TMP/config-notify new_cmd bk-notify-flood -- \
	    /bin/sh -c 'i=0; while [ $i -lt 40 ]; do
	    printf "\033]7717;corral-report;blocked\a"; sleep 0.05
	    printf "\033]7717;corral-report;working\a"; sleep 0.05
	    i=$((i + 1)); done')
	check "$id" result_ready "" nodone || return 1
	for _ in $(seq 50); do
		[ "$(pgrep -c -f "$TMP/notify-hook.sh" 2>/dev/null)" = 0 ] && break
		sleep 0.2
	done
	[ "$(grep -c '^start' "$calls.$id" 2>/dev/null)" -le 3 ] ||
	    { WHY="the hook ran $(grep -c '^start' "$calls.$id") times in 4 s"; return 1; }
	awk '/^start/ { if (open) exit 1; open = 1 } /^end/ { open = 0 }' \
	    "$calls.$id" 2>/dev/null || { WHY="two hook runs at a time"; return 1; }
}
mkdir -p "$TMP/config-notify/corral"
cp "$XDG_CONFIG_HOME/corral/policy.ini" "$TMP/config-notify/corral/"
printf '#!/bin/sh\necho "start $2" >>"%s.$1"\nsleep 0.3\necho "end $2" >>"%s.$1"\n' \
    "$TMP/notify-calls" "$TMP/notify-calls" >"$TMP/notify-hook.sh"
chmod 0755 "$TMP/notify-hook.sh"
printf '[notify]\nhook = %s\non = blocked, done, failed\n' "$TMP/notify-hook.sh" \
    >"$TMP/config-notify/corral/config"

# ---- the table: name, class ---------------------------------------------------------
PROBES=(
	fs_host_paths:mount fs_uncommitted:mount fs_search:mount
	fs_write_system:mount fs_proc_root:mount fs_other_lease:mount
	fs_links:mount fs_dev:mount fs_privileges:mount fs_fds:mount
	cred_env:credential cred_cmdline:credential cred_home:credential
	cred_sockets:credential cred_git:credential cred_keyring:credential
	net_connect:network net_dns:network net_namespace:network
	net_vsock:network net_io_uring:network
	egress_allowed:egress egress_name:egress egress_port:egress
	egress_suffix:egress egress_ip:egress egress_rebind:egress
	egress_noproxy:egress egress_dns:egress egress_sibling:egress
	egress_flood:egress
	egress_noegress:egress egress_fail:egress
	term_tiocsti:terminal term_tiocsti_high:terminal term_console:terminal
	term_escapes:terminal term_killall:terminal
	res_forkbomb:resource res_memhog:resource res_diskfill:resource
	res_inodes:resource res_bigfile:resource res_spin:resource
	res_sleep:resource res_flood:resource res_daemon:resource
	res_chmod000:resource res_fifo:resource res_deep:resource
	supply_hashes:supply_chain supply_hijack:supply_chain
	supply_tamper:supply_chain
	side_git_config:side_effect side_push:side_effect side_gitdir:side_effect
	side_worktree:side_effect
	import_dotgit_link:result_import import_symlinks:result_import
	import_bare_repo:result_import import_bare_fixture:result_import
	import_tool_config:result_import
	xz_memhog:exec_zone xz_forkbomb:exec_zone xz_diskfill:exec_zone
	xz_inodes:exec_zone xz_sleep:exec_zone xz_daemon:exec_zone
	bk_da_flood:bookkeeping bk_notify_flood:bookkeeping
)

# kill_tree PID: PID and every descendant (a hung probe's leases'
# clients, script(1) sessions, curl...), children first found, then all.
kill_tree() {
	local p kids
	kids=$(ps -o pid= --ppid "$1" 2>/dev/null)
	for p in $kids; do kill_tree "$p"; done
	kill -KILL "$1" 2>/dev/null
}
# run_one NAME CLASS: one probe under its deadline; its verdict line goes
# to stdout the moment it finishes (progress) and to RES for the tally.
run_one() {
	local name=$1 cls=$2 t0=$SECONDS p rc line
	(trap - EXIT; WHY=; "p_$name"; rc=$?; printf '%s' "$WHY" >"$RES/$name.why"; exit $rc) &
	p=$!
	while kill -0 "$p" 2>/dev/null; do
		if [ $((SECONDS - t0)) -ge "$PROBE_TIMEOUT" ]; then
			kill_tree "$p"
			printf 'timed out after %ds' "$PROBE_TIMEOUT" >"$RES/$name.why"
			break
		fi
		sleep 0.2
	done
	wait "$p" 2>/dev/null
	rc=$?
	if [ "$rc" = 0 ] && [ ! -s "$RES/$name.why" ]; then
		line=$(printf 'ok    %-14s %-22s %4ds' "$cls" "$name" $((SECONDS - t0)))
	else
		line=$(printf 'FAIL  %-14s %-22s %4ds  %s' "$cls" "$name" \
		    $((SECONDS - t0)) "$(cat "$RES/$name.why" 2>/dev/null)")
	fi
	echo "$line" >"$RES/$name.out"
	echo "$line"
}

# The terminal probes share the operator's pane: run them one by one first.
selected=()
for e in "${PROBES[@]}"; do
	[[ "${e%%:*}" =~ $ONLY ]] && selected+=("$e")
done
for e in "${selected[@]}"; do
	case "$e" in term_tiocsti:*|term_escapes:*) run_one "${e%%:*}" "${e#*:}" ;; esac
done
# The rest JOBS at a time (the listener and sentinel are jobs too: wait
# for the probes' PIDs only).
jobs_=()
for e in "${selected[@]}"; do
	case "$e" in term_tiocsti:*|term_escapes:*) continue ;; esac
	(trap - EXIT; run_one "${e%%:*}" "${e#*:}") &
	jobs_+=($!)
	while [ "$(jobs -rp | grep -c -v -x -e "$LISTENER" -e "$SENTINEL")" -ge "$JOBS" ]; do
		wait -n
	done
done
[ "${#jobs_[@]}" -gt 0 ] && wait "${jobs_[@]}"

# Suite-wide verdicts, after every lease.
PASS=0
FAIL=0
for e in "${selected[@]}"; do
	n=${e%%:*}
	[ -f "$RES/$n.out" ] || echo "FAIL  ${e#*:} $n (no result)"
	if grep -q '^ok' "$RES/$n.out" 2>/dev/null; then PASS=$((PASS + 1)); else FAIL=$((FAIL + 1)); fi
done
suite() {
	local name=$1
	shift
	if "$@"; then
		printf 'ok    %-14s %-22s\n' suite "$name"; PASS=$((PASS + 1))
	else
		printf 'FAIL  %-14s %-22s\n' suite "$name"; FAIL=$((FAIL + 1))
	fi
}
suite no_hook_fired test ! -e "$HOOK_FIRED"
suite no_listener_hit test ! -s "$TMP/listener.log"
suite host_refs_unchanged bash -c "cmp -s <(git -C '$REPO' for-each-ref --format='%(refname) %(objectname)' | grep -v '^refs/heads/corral/') '$TMP/refs.before'"
suite host_files_unchanged sha256sum -c --quiet "$TMP/sums.before"
suite sentinel_alive kill -0 "$SENTINEL"
suite upstream_only_allowed test -z "$(upstream_foreign)"
[ -s "$TMP/listener.log" ] && sed 's/^/  listener: /' "$TMP/listener.log"
echo "adversarial: $((PASS + FAIL)) checks in $SECONDS s"
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
