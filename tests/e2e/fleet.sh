#!/usr/bin/env bash
# fleet.sh: the SSH fleet's first slice through the real binary and real
# OpenSSH (issue 23, SPEC 8.1 "SSH hosts", 8.6, 9.2). Two "hosts" are two
# real sshd instances this test starts on loopback ports, each with its
# own host key and its own corral state and config directories (sshd's
# SetEnv); the operator's key and known_hosts are made here. A third host
# in fleet.ini has nothing listening: it is down.
#   fleet.ini: a malformed one is named file:line:field;
#   fleet ls: each host's corral version and preflight, its leases against
#     its capacity; the host that is down is reported, the others listed;
#   new --host / --label: placed on the least loaded host with room, the
#     workspace seeded from a pack of the base's tree sent over ssh (the
#     host never sees the operator's repository), run under the operator's
#     policy (not the host's), recorded here with its host; refused by
#     name when the host is unknown, down, or every host is full.
set -u
. "$(dirname "$0")/lib.bash"

needs_root
SSHD=/usr/sbin/sshd
[ -x "$SSHD" ] && [ -x /usr/bin/ssh ] || { echo "fleet.sh needs openssh-server and openssh-client (scripts/packages.txt)"; exit 1; }
# sshd's privilege separation directory (Debian's package makes it at boot).
mkdir -p /run/sshd && chmod 0755 /run/sshd

S=$TMP/ssh
mkdir -p "$S" && chmod 0700 "$S"
ssh-keygen -q -t ed25519 -N '' -C corral-fleet-test -f "$S/id" || exit 1
cp "$S/id.pub" "$S/authorized_keys"
: >"$S/known_hosts"

# A free loopback port (the kernel's choice; sshd retries below if taken).
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

declare -A PORT PID
# start_host NAME: an sshd for host NAME, found afterwards by its PID.
start_host() {
	local h=$1 d=$TMP/host-$1 try
	mkdir -p "$d/state" "$d/config/corral"
	chmod 0700 "$d"
	ssh-keygen -q -t ed25519 -N '' -f "$d/hostkey" || return 1
	for try in 1 2 3; do
		PORT[$h]=$(free_port)
		cat >"$d/sshd_config" <<EOF
Port ${PORT[$h]}
ListenAddress 127.0.0.1
HostKey $d/hostkey
PidFile none
AuthorizedKeysFile $S/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AllowAgentForwarding no
# The relay forwards a unix socket; sshd's AllowTcpForwarding gates it too.
AllowTcpForwarding local
AllowStreamLocalForwarding local
X11Forwarding no
PrintMotd no
SetEnv CORRAL_STATE_DIR=$d/state XDG_CONFIG_HOME=$d/config
EOF
		"$SSHD" -D -e -f "$d/sshd_config" 2>"$d/sshd.log" &
		PID[$h]=$!
		# Listening, or exited (the port was taken): a deadline either way.
		for _ in $(seq 100); do
			grep -q "Server listening" "$d/sshd.log" && break
			kill -0 "${PID[$h]}" 2>/dev/null || break
			sleep 0.1
		done
		if grep -q "Server listening" "$d/sshd.log"; then
			echo "[127.0.0.1]:${PORT[$h]} $(cut -d' ' -f1,2 "$d/hostkey.pub")" >>"$S/known_hosts"
			return 0
		fi
		kill "${PID[$h]}" 2>/dev/null
		wait "${PID[$h]}" 2>/dev/null
	done
	cat "$d/sshd.log"
	return 1
}

# Each host's leases end as an operator's would there, then the sshds, by
# the PIDs this test started; lib.bash's cleanup does the rest.
fleet_cleanup() {
	local h d
	for h in a b; do
		d=$TMP/host-$h
		[ -d "$d/state" ] || continue
		(CORRAL_STATE_DIR=$d/state; XDG_CONFIG_HOME=$d/config; TMP=$d/state; cleanup)
	done
	for h in "${!PID[@]}"; do
		kill "${PID[$h]}" 2>/dev/null
		wait "${PID[$h]}" 2>/dev/null
	done
	cleanup
}
trap fleet_cleanup EXIT

start_host a || { echo "sshd for host a did not start"; exit 1; }
start_host b || { echo "sshd for host b did not start"; exit 1; }
DOWN=$(free_port)

cat >"$S/config" <<EOF
Host *
	IdentityFile $S/id
	IdentitiesOnly yes
	UserKnownHostsFile $S/known_hosts
	GlobalKnownHostsFile /dev/null
	StrictHostKeyChecking yes
	LogLevel ERROR
EOF
mkdir -p "$XDG_CONFIG_HOME/corral"
FLEET=$XDG_CONFIG_HOME/corral/fleet.ini

# --- a malformed fleet file is named file:line:field -----------------------------
cat >"$FLEET" <<EOF
[host a]
ssh = ssh://root@127.0.0.1:${PORT[a]}
capacity = 0
EOF
err=$("$CORRAL" fleet ls 2>&1 >/dev/null); rc=$?
check "a bad capacity fails fleet ls (exit $rc)" test "$rc" = 1
check "it is named file:line:field" grep -qF "$FLEET:3: capacity: want 1..1000" <<<"$err"
printf '[host a]\nssh = -oProxyCommand=x\ncapacity = 1\n' >"$FLEET"
err=$("$CORRAL" fleet ls 2>&1 >/dev/null)
check "an ssh destination that is an option is refused" grep -qF "$FLEET:2: ssh: want an ssh destination" <<<"$err"
printf '[host a]\ncapacity = 1\n' >"$FLEET"
err=$("$CORRAL" fleet ls 2>&1 >/dev/null)
check "a host without a destination is named" grep -qF "$FLEET:1: ssh: [host a] has no ssh destination" <<<"$err"

cat >"$FLEET" <<EOF
# the test's fleet: two real sshds and one port with nothing behind it
[fleet]
ssh_config = $S/config
connect_timeout = 20

[host a]
ssh = ssh://root@127.0.0.1:${PORT[a]}
capacity = 2
labels = x
corral = $CORRAL

[host b]
ssh = ssh://root@127.0.0.1:${PORT[b]}
capacity = 1   ; one lease at most
labels = x, small
corral = $CORRAL

[host c]
ssh = ssh://root@127.0.0.1:$DOWN
capacity = 4
labels = x
corral = $CORRAL
EOF

# --- fleet ls: versions, preflight, capacity; the down host reported -------------
VER=$("$CORRAL" --version | cut -d' ' -f2)
ls=$("$CORRAL" fleet ls --json); rc=$?
check "fleet ls answers with a host down (exit $rc)" test "$rc" = 0
check "fleet ls lists the three hosts" jq_eq "$ls" '[.[].host] | join(",")' "a,b,c"
check "host a: reachable, corral $VER, preflight passed, 0 of 2" jq_eq "$ls" \
	'.[0] | "\(.reachable) \(.version) \(.same_version) \(.preflight) \(.live) \(.capacity) \(.usable)"' \
	"true $VER true passed 0 2 true"
check "host b: reachable, corral $VER, preflight passed, 0 of 1" jq_eq "$ls" \
	'.[1] | "\(.reachable) \(.version) \(.preflight) \(.live) \(.capacity)"' "true $VER passed 0 1"
check "host c: down, reported as unreachable" jq_eq "$ls" \
	'.[2] | "\(.reachable) \(.usable) \(.reason | startswith("unreachable: ssh exited 255"))"' "false false true"
check "fleet ls as text names the down host" bash -c "'$CORRAL' fleet ls | grep -A3 '^c ' | grep -q unreachable"

# --- the operator's policy and repository ----------------------------------------
# The operator's policy narrows the shipped one; each host's own policy is
# the shipped one (looser): a fleet lease must run under the operator's.
cat >"$XDG_CONFIG_HOME/corral/policy.ini" <<'EOF'
[limits]
wall_time = 77m
pids = 300
EOF
REPO=$TMP/repo
new_repo "$REPO"
echo one >"$REPO/a.txt"
mkdir "$REPO/sub" && printf 'deep\n' >"$REPO/sub/b.txt"
git -C "$REPO" add -A && git -C "$REPO" commit -q -m c1
echo two >"$REPO/a.txt" && git -C "$REPO" commit -q -am c2
TREE=$(git -C "$REPO" rev-parse 'HEAD^{tree}')
on() { local h=$1; shift; CORRAL_STATE_DIR=$TMP/host-$h/state XDG_CONFIG_HOME=$TMP/host-$h/config "$CORRAL" "$@"; }
AGENT='cat a.txt sub/b.txt; echo "seen $(ls -a | tr "\n" " ")"; read -r x; echo "got [$x]"; sleep 600'

# --- new --host a: seeded over ssh, the operator's policy, recorded here ---------
id1=$(cd "$REPO" && "$CORRAL" new --host a --name first -- /bin/sh -c "$AGENT"); rc=$?
check "new --host a prints a lease ID (exit $rc)" valid_id "$id1"
check "the lease runs on host a (its own state directory)" bash -c "CORRAL_STATE_DIR='$TMP/host-a/state' '$CORRAL' show '$id1' --json >/dev/null"
check "it is not a lease of this machine's journal" bash -c "! '$CORRAL' show '$id1' >/dev/null 2>&1"
check "the agent sees the base's tree (c2), seeded over ssh" bash -c \
	"for i in \$(seq 100); do CORRAL_STATE_DIR='$TMP/host-a/state' '$CORRAL' screen '$id1' | grep -q '^deep' && exit 0; sleep 0.2; done; exit 1"
scr=$(on a screen "$id1")
check "a.txt is the base commit's" grep -qx two <<<"$scr"
grep -v '^$' <<<"$scr" | sed 's/^/# screen: /'
j=$(on a show "$id1" --json)
check "host a's lease is sandboxed under bwrap" jq_eq "$j" '"\(.mode) \(.adapter)"' "sandboxed bwrap"
check "it runs under the operator's policy: wall_time 77m" jq_eq "$j" '.limits.wall_time_s' 4620
check "and pids 300 (the host's own says 512)" jq_eq "$j" '.limits.pids' 300
check "the host's base has the operator's tree" test "$(git -C "$(jq -r .repo <<<"$j" 2>/dev/null || echo /)" rev-parse "$(jq -r .base <<<"$j")^{tree}" 2>/dev/null)" = "$TREE"
rec=$CORRAL_STATE_DIR/fleet/leases/$id1.json
check "the lease is recorded here with its host" jq_eq "$(cat "$rec")" '"\(.host) \(.state) \(.tree)"' "a running $TREE"
check "the record is 0600" test "$(stat -c %a "$rec")" = 600
check "the record has the host's corral version and preflight facts" jq_eq "$(cat "$rec")" \
	'"\(.host_corral_version) \(.host_preflight.kernel != null) \(.host_preflight.bwrap_version != null)"' "$VER true true"
check "fleet ls names it under host a with its state there" bash -c "'$CORRAL' fleet ls | grep -A6 '^a ' | grep -q 'placed *$id1 '"
# A seed that is not a pack becomes no lease and leaves nothing on the host.
before=$(ls "$TMP/host-a/state/fleet/seeds" | wc -l)
err=$(printf 'corral-fleet-seed 1 3\nabcnot a pack' | /usr/bin/ssh -F "$S/config" "ssh://root@127.0.0.1:${PORT[a]}" \
	"$CORRAL" fleet receive --tree "$TREE" --from "$(git -C "$REPO" rev-parse HEAD)" --time 0 -- /bin/true 2>&1); rc=$?
check "host a refuses a stream that is not a pack (exit $rc)" grep -q "seed_invalid: git unpack-objects exited" <<<"$err"
check "and leaves no seed behind" test "$(ls "$TMP/host-a/state/fleet/seeds" | wc -l)" = "$before"
check "no intent is left pending" bash -c "! ls '$CORRAL_STATE_DIR/fleet/leases' | grep -q pending"

# --- the relay: the holder's own protocol through a socket forwarded by ssh -----
out=$("$CORRAL" fleet screen "$id1" 2>&1)
check "fleet screen shows the remote lease's screen through ssh" grep -qx deep <<<"$out"
check "fleet send types into it" "$CORRAL" fleet send "$id1" 'hello\r'
# (each try is an ssh connection: a few, not poll's 150)
check "the agent on host a got the input" bash -c "for i in \$(seq 20); do '$CORRAL' fleet screen '$id1' | grep -qF 'got [hello]' && exit 0; sleep 0.5; done; exit 1"
check "the relay's socket is gone afterwards" bash -c "[ -z \"\$(ls -A '$CORRAL_STATE_DIR/fleet/relay')\" ]"
check "fleet screen --json is the screen document" jq_eq "$("$CORRAL" fleet screen --json "$id1")" '.rows > 0' true
# The connection is cut: every session of host a's sshd is killed (the
# children of the PID this test started); the lease runs on there and the
# next relay reaches it again.
# Relays one after the other, so that one is open when the cut comes.
(for _ in $(seq 60); do "$CORRAL" fleet screen "$id1" >/dev/null 2>&1; done) &
RPID=$!
poll bash -c "pgrep -P ${PID[a]} >/dev/null"
cut=0
for p in $(pgrep -P "${PID[a]}"); do kill -9 "$p" 2>/dev/null && cut=$((cut + 1)); done
check "a relay's ssh session was cut ($cut killed)" test "$cut" -ge 1
kill "$RPID" 2>/dev/null
wait "$RPID" 2>/dev/null
check "after the cut the lease is still live on host a" jq_eq "$(on a show "$id1" --json)" .lease_state running
check "and the relay reaches it again" bash -c "'$CORRAL' fleet screen '$id1' | grep -qF 'got [hello]'"
err=$("$CORRAL" fleet screen 20200101-000000-000-0000 2>&1); rc=$?
check "fleet screen of a lease not placed from here is refused (exit $rc)" grep -q "no lease 20200101-000000-000-0000 was placed" <<<"$err"

# --- placement by label: least loaded with room, then refused by name ------------
id2=$(cd "$REPO" && "$CORRAL" new --label x -- /bin/sh -c "$AGENT"); rc=$?
check "new --label x goes to b, the least loaded (a has 1) (exit $rc)" \
	jq_eq "$(cat "$CORRAL_STATE_DIR/fleet/leases/$id2.json" 2>/dev/null)" .host b
check "b runs it" bash -c "CORRAL_STATE_DIR='$TMP/host-b/state' '$CORRAL' show '$id2' >/dev/null"
id3=$(cd "$REPO" && "$CORRAL" new --label x -- /bin/sh -c "$AGENT")
check "the next goes to a (b is full)" \
	jq_eq "$(cat "$CORRAL_STATE_DIR/fleet/leases/$id3.json" 2>/dev/null)" .host a
err=$(cd "$REPO" && "$CORRAL" new --label x -- /bin/true 2>&1); rc=$?
check "with every host full or down new is refused (exit $rc)" test "$rc" = 1
check "the refusal names each host's reason" bash -c 'grep -q "fleet_unavailable" <<<"$1" &&
	grep -q "a: at capacity (2 of 2 leases)" <<<"$1" && grep -q "b: at capacity (1 of 1" <<<"$1" &&
	grep -q "c: unreachable" <<<"$1"' _ "$err"
err=$(cd "$REPO" && "$CORRAL" new --host c -- /bin/true 2>&1); rc=$?
check "new --host c (down) is refused by name (exit $rc)" bash -c '[ "$2" = 1 ] && grep -q "c: unreachable: ssh exited 255" <<<"$1"' _ "$err" "$rc"
err=$(cd "$REPO" && "$CORRAL" new --host nosuch -- /bin/true 2>&1)
check "an unknown host is named" grep -q "no_such_host: nosuch is not a host in $FLEET" <<<"$err"
err=$(cd "$REPO" && "$CORRAL" new --label gpu -- /bin/true 2>&1)
check "a label no host has is named" grep -q "no_such_host: no host in $FLEET has label gpu" <<<"$err"
check "refusals record nothing" test "$(ls "$CORRAL_STATE_DIR/fleet/leases" | wc -l)" = 3

ls=$("$CORRAL" fleet ls --json)
check "fleet ls: a 2 of 2 with the two placed here" jq_eq "$ls" \
	".[0] | \"\(.live) \([.placed[].id] | sort | join(\",\"))\"" "2 $(printf '%s\n' "$id1" "$id3" | sort | paste -sd,)"
check "fleet ls: b 1 of 1, not usable (full)" jq_eq "$ls" '.[1] | "\(.live) \(.usable)"' "1 false"

# --- the host's own preflight decides: a host that fails it takes nothing --------
printf '[network]\nallow = *\n' >"$TMP/host-b/config/corral/policy.ini"
on b cancel "$id2" >/dev/null 2>&1
poll bash -c "[ \"\$(CORRAL_STATE_DIR='$TMP/host-b/state' '$CORRAL' ls --json | jq length)\" = 0 ]"
ls=$("$CORRAL" fleet ls --json)
check "b with an unrestricted policy fails its preflight there" jq_eq "$ls" \
	'.[1] | "\(.preflight) \(.usable)"' "isolation_unsatisfiable false"

# --- cancel through the relay --------------------------------------------------
out=$("$CORRAL" fleet cancel "$id1" 2>&1); rc=$?
check "fleet cancel ends the lease on host a (exit $rc)" grep -qx "$id1 cancelled" <<<"$out"
check "host a's journal says cancelled" poll bash -c "CORRAL_STATE_DIR='$TMP/host-a/state' '$CORRAL' show '$id1' --json | jq -e '.lease_state == \"cancelled\"'"
on a cancel "$id3" >/dev/null 2>&1
finish
