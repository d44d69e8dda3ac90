#!/usr/bin/env bash
# spec10.sh: the acceptance of the whole system (SPEC 10 steps 1-6, issue 9
# item 2), through the real binary, tmux and the command line, confirmed
# from the host side: two writing agents on bwrap leases of one base while
# the console runs (focus never moves); each destroys its own copy but
# reads neither the host checkout, corral's environment, the other lease,
# nor the network (a host listener sees nothing); SIGKILL of the console
# while both work, a new console shows both, running, once each; each
# result lands in its own review worktree only; one rejected, the other
# applied by an explicit command; every runtime resource is gone, the
# results and history remain.
set -u
. "$(dirname "$0")/../e2e/lib.bash"
. "$(dirname "$0")/host.bash"
export LC_ALL=C.UTF-8

[ "$(id -u)" = 0 ] || { echo "spec10.sh needs root (bwrap leases)"; exit 1; }
for p in tmux python3 git; do
	command -v $p >/dev/null || { echo "$p is required (scripts/packages.txt)"; exit 1; }
done
TS="corral-spec10-$$"
W=120 H=40
PANE_X=37	# the layout at 120 columns: list 36, rule, then the pane
t() { tmux -L "$TS" "$@"; }
LISTENER=
trap 't kill-server 2>/dev/null; [ -n "$LISTENER" ] && kill "$LISTENER" 2>/dev/null; cleanup' EXIT
T0=$(date +%s)

# --- the host: a checkout with an uncommitted canary, secrets in corral's
# environment, a listener on every host address --------------------------------
REPO=$TMP/checkout
HOSTCANARY="host-canary-$RANDOM$RANDOM"
ENVCANARY="env-canary-$RANDOM$RANDOM"
git init -q -b main "$REPO"
git -C "$REPO" config user.email e@x.invalid
git -C "$REPO" config user.name e
mkdir -p "$REPO/src" "$REPO/.accept"
printf 'int answer = 42;\n' >"$REPO/src/a.c"
printf 'int other = 7;\n' >"$REPO/src/b.c"
printf '# project\n' >"$REPO/README.md"
# The agent: destroys its copy, keeps a token of its own, works until told
# to go on, then probes what it must not reach and writes its evidence.
cat >"$REPO/.accept/agent.sh" <<'EOF'
#!/bin/sh
# agent.sh NAME HOSTREPO STATEDIR PORT HOSTIP
name=$1 repo=$2 state=$3 port=$4 hostip=$5
rm -rf /work/* /work/.accept	# SPEC 10.2: it may destroy its own copy
tok="token-$name-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
echo "$tok" >"/work/token-$name.txt"
exec 3<&0
( read -r _ <&3; : >/tmp/go ) &
n=0
while [ ! -e /tmp/go ]; do
	n=$((n + 1))
	printf '\r%s working, step %d ' "$name" "$n"
	sleep 0.2
done
printf '\nprobing\n'
{
	echo "== host checkout"
	cat "$repo/canary.txt" "$repo/README.md" 2>&1
	ls -la "$repo" 2>&1
	echo "== environment"
	env
	cat /proc/1/environ 2>&1 | tr '\0' '\n'
	echo "== other leases"
	ls "$state/leases" "$state/worktrees" 2>&1
	cat "$state"/leases/*/work/token-* 2>&1
	find / -xdev -name 'token-*' ! -path "/work/token-$name.txt" 2>/dev/null |
		while read -r f; do echo "found $f"; cat "$f"; done
	echo "== network"
	for u in "http://127.0.0.1:$port/" "http://$hostip:$port/"; do
		curl -fsS -m 3 --noproxy '*' -o /dev/null "$u" 2>&1; echo "direct $u rc=$?"
		if [ -n "${HTTPS_PROXY:-}" ]; then
			curl -fsS -m 3 -x "$HTTPS_PROXY" -o /dev/null "$u" 2>&1; echo "proxy $u rc=$?"
			curl -fsS -m 3 -p -x "$HTTPS_PROXY" -o /dev/null "$u" 2>&1; echo "connect $u rc=$?"
		fi
	done
} >"/work/evidence-$name.txt" 2>&1
printf 'int %s_done = 1;\n' "$name" >"/work/result-$name.c"
echo "$name finished"
exit 0
EOF
git -C "$REPO" add -A
git -C "$REPO" commit -q -m base
BASE=$(git -C "$REPO" rev-parse HEAD)
echo "$HOSTCANARY" >"$REPO/canary.txt"	# uncommitted: never in a clone
HOST_SUM=$(cd "$REPO" && find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 sha256sum)
export AWS_SECRET_ACCESS_KEY=$ENVCANARY CORRAL_ACCEPT_CANARY=$ENVCANARY
# The operator's policy: one allowlisted name that never resolves (so each
# lease has its proxy once leases are wired to one), violations recorded.
mkdir -p "$XDG_CONFIG_HOME/corral"
cat >"$XDG_CONFIG_HOME/corral/policy.ini" <<'EOF'
[network]
allow = api.accept.invalid:443
on_egress_violation = record
[limits]
wall_time = 10m
memory = 256M
pids = 128
disk = 32M
inodes = 4096
EOF
HOSTIP=$(ip -4 -o addr show scope global | awk '{split($4, a, "/"); print a[1]; exit}')
[ -n "$HOSTIP" ] || HOSTIP=127.0.0.1
python3 - "$TMP/listener.log" "$TMP/listener.port" <<'EOF' &
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 0))
s.listen(16)
open(sys.argv[2], "w").write(str(s.getsockname()[1]))
while True:
    c, a = s.accept()
    with open(sys.argv[1], "a") as f:
        f.write("connection from %s:%d\n" % a)
    c.close()
EOF
LISTENER=$!
poll test -s "$TMP/listener.port"
PORT=$(cat "$TMP/listener.port")
: >"$TMP/listener.log"
check "control: the host listener sees a connection from the host" \
	python3 -c "import socket; socket.create_connection(('$HOSTIP', $PORT), 2).close()"
check "control: ... and logs it" poll grep -q connection "$TMP/listener.log"
: >"$TMP/listener.log"

# --- the console in tmux, focused on a quiet lease of the operator --------------
cat >"$TMP/tmux.conf" <<'EOF'
set -g status off
set -g remain-on-exit on
set -g default-terminal tmux-256color
set -g default-size 120x40
EOF
cat >"$TMP/run-console" <<EOF
env CORRAL_STATE_DIR='$CORRAL_STATE_DIR' XDG_CONFIG_HOME='$XDG_CONFIG_HOME' LANG=C.UTF-8 LC_ALL=C.UTF-8 '$CORRAL' "\$@"
EOF
screen() { t capture-pane -p -t acc:con; }
pane_area() {
	local l
	t capture-pane -p -t acc:con -S 0 -E $((H - 2)) | while IFS= read -r l; do
		printf '%s\n' "${l:PANE_X}"
	done
}
on_screen() { screen | grep -qF -- "$1"; }
console_pid() { pgrep -P "$(t display -p -t acc:con '#{pane_pid}')" -x corral; }
FOCUS=$("$CORRAL" new --sandbox trusted_local --allow-control --name operator -- \
	/bin/sh -c 'echo focus-marker-of-the-operator; exec sleep 1e9')
check "a quiet lease to focus" wait_screen "$FOCUS" focus-marker-of-the-operator
t -f "$TMP/tmux.conf" new-session -d -s acc -n hold -x $W -y $H "sleep 600"
t new-window -d -t acc -n con "sh $TMP/run-console attach $FOCUS"
check "the console shows the focused lease" poll on_screen focus-marker-of-the-operator
# The pane once two captures 0.2 s apart agree (the first frames drawn).
settled_pane() {
	local a b i
	a=$(pane_area)
	for i in $(seq 50); do
		sleep 0.2
		b=$(pane_area)
		[ "$a" = "$b" ] && break
		a=$b
	done
	printf '%s\n' "$b"
}
pane_before=$(settled_pane)
cur_before=$(t display -p -t acc:con '#{cursor_x},#{cursor_y}')

# --- SPEC 10.1: two writing agents from one base --------------------------------------
new() { (cd "$REPO" && "$CORRAL" new --name "$1" -- /bin/sh /work/.accept/agent.sh \
	"$1" "$REPO" "$CORRAL_STATE_DIR" "$PORT" "$HOSTIP"); }
A=$(new writer-a)
B=$(new writer-b)
check "10.1: corral new prints two lease IDs" bash -c "[[ '$A' =~ ^[0-9]{8}-[0-9]{6}-[0-9]{3}-[0-9a-f]{4}\$ && '$B' =~ ^[0-9]{8}-[0-9]{6}-[0-9]{3}-[0-9a-f]{4}\$ && '$A' != '$B' ]]"
check "10.1: both work" bash -c "'$CORRAL' wait $A --until working --timeout 30 && '$CORRAL' wait $B --until working --timeout 30"
check "10.1: both join the console's list" poll bash -c "tmux -L '$TS' capture-pane -p -t acc:con | grep -q writer-a &&
	tmux -L '$TS' capture-pane -p -t acc:con | grep -q writer-b"
ja=$(js "$A") jb=$(js "$B")
check "10.1: one base commit and ref" test "$(jq -r '"\(.base) \(.base_ref)"' <<<"$ja")" = "$BASE refs/heads/main" \
	-a "$(jq -r '"\(.base) \(.base_ref)"' <<<"$jb")" = "$BASE refs/heads/main"
for f in branch worktree workspace sandbox_id holder_pid; do
	check "10.1: distinct $f" test "$(jq -r ".$f" <<<"$ja")" != "$(jq -r ".$f" <<<"$jb")" \
		-a "$(jq -r ".$f" <<<"$ja")" != null -a "$(jq -r ".$f" <<<"$jb")" != null
done
check "10.1: distinct endpoints (holder sockets)" test -S "$CORRAL_STATE_DIR/leases/$A/holder.sock" \
	-a -S "$CORRAL_STATE_DIR/leases/$B/holder.sock"
check "10.1: branches corral/<id>" test "$(jq -r .branch <<<"$ja") $(jq -r .branch <<<"$jb")" = "corral/$A corral/$B"
check "10.1: review worktrees outside the checkout" bash -c \
	"case '$(jq -r .worktree <<<"$ja")' in '$REPO'*) exit 1;; esac; case '$(jq -r .worktree <<<"$jb")' in '$REPO'*) exit 1;; esac"
# Both rows in the list (above) are the marker: the console has handled
# both new leases; a focus they had moved would not come back.
pane_is() { [ "$(pane_area)" = "$1" ]; }
check "10.1: focus never moved (the pane is unchanged)" poll pane_is "$pane_before"
check "10.1: the status line still names the operator's lease" bash -c "tmux -L '$TS' capture-pane -p -t acc:con | tail -1 | grep -q operator"
check "10.1: the cursor did not move" test "$(t display -p -t acc:con '#{cursor_x},#{cursor_y}')" = "$cur_before"

# --- SPEC 10.2: from the host side, while they run ------------------------------------
only() { [ "$(ls -A "$CORRAL_STATE_DIR/leases/$1/work" | grep -vx '.git')" = "$2" ]; }
check "10.2: A destroyed its copy (only its token and .git are left)" only "$A" token-writer-a.txt
check "10.2: B destroyed its copy" only "$B" token-writer-b.txt
check "control: the env canary is in corral's own environment (the holder's)" \
	grep -qzx "AWS_SECRET_ACCESS_KEY=$ENVCANARY" "/proc/$(jq -r .holder_pid <<<"$ja")/environ"
check "control: the host canary is where the agents look" grep -qx "$HOSTCANARY" "$REPO/canary.txt"
check "10.2: the host checkout is untouched" test "$(cd "$REPO" && find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 sha256sum)" = "$HOST_SUM"
# The lease's own processes, from its cgroup (never by a command line
# another corral on the host could share), with their start times.
lease_procs() {
	local d p
	for d in $(find /sys/fs/cgroup -maxdepth 8 -type d -name "lease-$1" 2>/dev/null); do
		cat "$d/cgroup.procs" 2>/dev/null
	done | sort -un | while read -r p; do
		tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | grep -q "agent.sh" &&
			echo "$p $(pid_start "$p")"
	done
}
agent_uids() {	# ID: the uids its agent's processes run as
	lease_procs "$1" | while read -r p _; do stat -c %u "/proc/$p" 2>/dev/null; done | sort -u
}
AGENT_A=$(lease_procs "$A") AGENT_B=$(lease_procs "$B")
check "10.2: A's agent is seen in its cgroup" test -n "$AGENT_A"
check "10.2: A's agent runs as its lease uid, not root" \
	test "$(agent_uids "$A")" = "$(jq -r .sandbox_id <<<"$ja" | cut -d: -f2)"
check "10.2: B's agent runs as its own lease uid" \
	test "$(agent_uids "$B")" = "$(jq -r .sandbox_id <<<"$jb" | cut -d: -f2)"

# --- SPEC 10.3: SIGKILL the console while both work; restart ---------------------------
cpid=$(console_pid)
check "10.3: the console runs" test -n "$cpid"
hpa=$(jq -r .holder_pid <<<"$ja") hpb=$(jq -r .holder_pid <<<"$jb")
kill -9 "$cpid"
check "10.3: the console is gone" poll bash -c "! kill -0 $cpid 2>/dev/null"
check "10.3: both holders live on" bash -c "kill -0 $hpa && kill -0 $hpb"
check "10.3: both still working" bash -c "'$CORRAL' wait $A --until working --timeout 10 && '$CORRAL' wait $B --until working --timeout 10"
t respawn-pane -k -t acc:con "sh $TMP/run-console"
check "10.3: a new console shows both" poll bash -c "tmux -L '$TS' capture-pane -p -t acc:con | grep -q writer-a &&
	tmux -L '$TS' capture-pane -p -t acc:con | grep -q writer-b"
check "10.3: ... once each" bash -c "[ \$(tmux -L '$TS' capture-pane -p -t acc:con | grep -c writer-a) = 1 ] &&
	[ \$(tmux -L '$TS' capture-pane -p -t acc:con | grep -c writer-b) = 1 ]"
ls_js=$("$CORRAL" ls --json)
check "10.3: ls --json: both once, running, the same holders" jq_eq "$ls_js" \
	"[.[] | select(.id == \"$A\" or .id == \"$B\") | \"\(.lease_state) \(.holder_pid)\"] | sort | join(\",\")" \
	"$(printf 'running %s\nrunning %s\n' "$hpa" "$hpb" | sort | paste -sd,)"
check "10.3: no duplicate leases (three live: the operator's and the writers)" jq_eq "$ls_js" length 3

# --- SPEC 10.4: each returns a verified patch to its own review worktree ----------------
"$CORRAL" send "$A" 'go\r' >/dev/null
"$CORRAL" send "$B" 'go\r' >/dev/null
check "10.4: both end with a result" bash -c "'$CORRAL' wait $A --until result_ready --timeout 60 && '$CORRAL' wait $B --until result_ready --timeout 60"
check "10.4: A's result verified and materialised" poll has_receipt "$A" result_materialised
check "10.4: B's result verified and materialised" poll has_receipt "$B" result_materialised
check "10.4: both results verified (status ready)" test "$(field "$A" .result.status) $(field "$B" .result.status)" = "ready ready"
WA=$(field "$A" .worktree) WB=$(field "$B" .worktree)
rva=$("$CORRAL" review "$A" --json) rvb=$("$CORRAL" review "$B" --json)
check "10.4: A's worktree holds A's result and nothing of B" bash -c \
	"[ -f '$WA/result-writer-a.c' ] && [ -f '$WA/token-writer-a.txt' ] && [ -f '$WA/evidence-writer-a.txt' ] &&
	 [ ! -e '$WA/result-writer-b.c' ] && [ ! -e '$WA/token-writer-b.txt' ]"
check "10.4: B's worktree holds B's result and nothing of A" bash -c \
	"[ -f '$WB/result-writer-b.c' ] && [ -f '$WB/token-writer-b.txt' ] && [ ! -e '$WB/result-writer-a.c' ] &&
	 [ ! -e '$WB/token-writer-a.txt' ]"
check "10.4: each worktree is at its own result commit" bash -c \
	"[ \"\$(git -C '$WA' rev-parse HEAD)\" = \"\$(\"$CORRAL\" show $A --json | jq -r .result.commit)\" ] &&
	 [ \"\$(git -C '$WB' rev-parse HEAD)\" = \"\$(\"$CORRAL\" show $B --json | jq -r .result.commit)\" ]"
check "10.4: the destroyed copy is part of A's patch (base files deleted)" bash -c \
	"[ ! -e '$WA/src/a.c' ] && '$CORRAL' review $A | grep -q 'src/a.c'"
check "10.4: the evidence: receipts verify" bash -c \
	"'$CORRAL' show $A --json | jq -e .receipt.verified && '$CORRAL' show $B --json | jq -e .receipt.verified"
check "10.4: the evidence: preflight, sandbox and teardown receipts" bash -c "for i in $A $B; do
	for k in preflight sandbox teardown result_materialised; do
	'$CORRAL' show \$i --json | jq -e --arg k \$k '[.receipts[].kind] | index(\$k)' >/dev/null || exit 1; done; done"
rv_has() { jq -r '.. | strings' <<<"$1" | grep -qF -- "$2"; }
rv_lacks() { ! rv_has "$@"; }
check "10.4: A's review names A's file" rv_has "$rva" result-writer-a.c
check "10.4: ... and nothing of B" rv_lacks "$rva" result-writer-b.c
check "10.4: B's review names B's file" rv_has "$rvb" result-writer-b.c
check "10.4: ... and nothing of A" rv_lacks "$rvb" result-writer-a.c

# --- SPEC 10.2 again, on what came back: nothing leaked into it --------------------------
TOKA=$(cat "$WA/token-writer-a.txt") TOKB=$(cat "$WB/token-writer-b.txt")
leaks() { # FILE...: none holds the host or environment canary
	! grep -qF -e "$HOSTCANARY" -e "$ENVCANARY" "$@"
}
check "10.2: tokens are distinct and real" test -n "$TOKA" -a -n "$TOKB" -a "$TOKA" != "$TOKB"
check "10.2: A read neither the host checkout nor corral's environment" leaks "$WA/evidence-writer-a.txt"
check "10.2: B read neither the host checkout nor corral's environment" leaks "$WB/evidence-writer-b.txt"
check "10.2: A never read B's workspace" bash -c "! grep -rqF '$TOKB' '$WA' '$CORRAL_STATE_DIR/leases/$A/transcript'"
check "10.2: B never read A's workspace" bash -c "! grep -rqF '$TOKA' '$WB' '$CORRAL_STATE_DIR/leases/$B/transcript'"
check "10.2: the probes did run (positive control: its own environment is there)" \
	grep -q '^HOME=' "$WA/evidence-writer-a.txt"
check "10.2: no canary in either transcript" leaks "$CORRAL_STATE_DIR/leases/$A/transcript" \
	"$CORRAL_STATE_DIR/leases/$B/transcript"
check "10.2: the host listener saw no connection" test ! -s "$TMP/listener.log"
check "10.2: the agents' own attempts failed" bash -c "grep -c 'rc=0' '$WA/evidence-writer-a.txt' | grep -qx 0"
for i in $A $B; do
	n=$(field "$i" .name)
	check "10.2: $n has its auditing proxy (receipt)" has_receipt "$i" egress_proxy
	check "10.2: $n: the proxy's refusals are in the receipt" jq_eq "$(js "$i")" \
		'[.receipts[] | select(.kind == "egress" and .fields.verdict == "deny")] | length > 0' true
	check "10.2: $n: nothing was allowed" jq_eq "$(js "$i")" \
		'[.receipts[] | select(.kind == "egress" and .fields.verdict == "allow")] | length' 0
done
check "10.2: the agents saw the proxy (HTTPS_PROXY in their zone)" grep -q '^HTTPS_PROXY=' "$WA/evidence-writer-a.txt"

# --- SPEC 10.5: reject one, apply the other explicitly -----------------------------------
check "10.5: reject B" "$CORRAL" reject "$B"
check "10.5: B is rejected, its worktree gone" bash -c "[ \"\$('$CORRAL' show $B --json | jq -r .lease_state)\" = rejected ] && [ ! -e '$WB' ]"
git -C "$REPO" branch integration "$BASE"
out=$("$CORRAL" apply "$A" 2>&1); rc=$?
check "10.5: apply into the checked-out main refuses, with the owner's merge" \
	test "$rc" -ne 0 -a -n "$(grep -F "git merge --ff-only corral/$A" <<<"$out")"
check "10.5: the checkout is untouched by it" test "$(cd "$REPO" && find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 sha256sum)" = "$HOST_SUM" -a "$(git -C "$REPO" rev-parse main)" = "$BASE"
check "10.5: apply A --into integration" "$CORRAL" apply "$A" --into integration
check "10.5: integration is fast-forwarded to A's reviewed commit" test \
	"$(git -C "$REPO" rev-parse integration)" = "$(field "$A" .result.commit)" \
	-a "$(git -C "$REPO" rev-parse integration~1)" = "$BASE"
check "10.5: A is applied" jq_eq "$(js "$A")" .lease_state applied
check "10.5: nothing of B reached the repository" bash -c \
	"! git -C '$REPO' show integration:token-writer-b.txt 2>/dev/null && [ \"\$(git -C '$REPO' rev-parse main)\" = '$BASE' ]"

# --- SPEC 10.6: every runtime resource cleaned; results and history remain --------------
check "10.6: cancel the operator's quiet lease" "$CORRAL" cancel "$FOCUS"
"$CORRAL" wait "$FOCUS" --until cancelled --timeout 30 >/dev/null 2>&1
check "10.6: reconcile" "$CORRAL" reconcile
t kill-server 2>/dev/null
for i in $A $B; do
	n=$(field "$i" .name)
	runtime_gone "$i" "10.6 $n"
	procs=$AGENT_A; [ "$i" = "$B" ] && procs=$AGENT_B
	check "10.6 $n: no process of its agent" all_gone "$procs"
	check "10.6 $n: the result is kept" test -n "$(ls -A "$CORRAL_STATE_DIR/leases/$i/result" 2>/dev/null)"
	check "10.6 $n: the branch is kept" git -C "$REPO" show-ref -q "refs/heads/corral/$i"
done
check "10.6: the operator's lease is gone too" poll no_holder "$FOCUS"
check "10.6: ... its cleanup confirmed" jq_eq "$(js "$FOCUS")" .cleanup confirmed
check "10.6: nothing live" jq_eq "$("$CORRAL" ls --json)" length 0
check "10.6: ls --all keeps all three" jq_eq "$("$CORRAL" ls --all --json)" \
	'[.[] | .lease_state] | sort | join(" ")' "applied cancelled rejected"
check "10.6: a rejected result is still reviewable" bash -c "'$CORRAL' review $B | grep -q result-writer-b.c"
echo "# spec10: $(( $(date +%s) - T0 ))s"

finish
