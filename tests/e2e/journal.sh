#!/usr/bin/env bash
# journal.sh: the holder's journal writes and reconciliation's judgement of
# holders (issue 16 items 7, 9, 10; SPEC 9.1, 9.2), through the real binary,
# real bwrap leases and the real SQLite journal:
# - another process holds the journal's write lock for 15 s (a write
#   transaction) while a lease runs and finishes: every status ping
#   answers, `ls` never shows the lease lost, `reconcile` never calls its
#   holder lost or kills it, and afterwards nothing is missing (agent_exited,
#   the done activity, the result) and the receipt chain verifies;
# - the state directory (a small tmpfs) fills up: the agent keeps running,
#   `ls` says journal_unwritable, and once space returns the result is
#   extracted and the chain verifies;
# - `corral new` killed while its holder starts, then `reconcile`, in both
#   orders (CORRAL_FAULT_WAIT stops each process at the point that matters):
#   either the lease fails and its agent never runs, or the holder has it
#   and reconcile leaves it running.
# Takes 60-90 s on a loaded 2-core host.
set -u
. "$(dirname "$0")/lib.bash"

needs_root
command -v sqlite3 >/dev/null || { echo "sqlite3 is required"; exit 1; }
# The state directory is a small file system of its own, so the test can
# fill it (part 2); the cleanup unmounts it.
mkdir -p "$CORRAL_STATE_DIR"
mount -t tmpfs -o size=160M,mode=0700 corral-journal-test "$CORRAL_STATE_DIR" ||
	{ echo "cannot mount a tmpfs for the state directory"; exit 1; }
DB=$CORRAL_STATE_DIR/corral.db
REPO=$TMP/repo
new_repo "$REPO"
echo base >"$REPO/README"
git -C "$REPO" add -A && git -C "$REPO" commit -qm base
mkdir -p "$XDG_CONFIG_HOME/corral"
cat >"$XDG_CONFIG_HOME/corral/policy.ini" <<'EOF'
[limits]
wall_time = 120s
memory = 256M
pids = 128
disk = 32M
inodes = 4096
EOF
new() { (cd "$REPO" && "$CORRAL" new "$@"); }
js() { "$CORRAL" show "$1" --json; }
state() { js "$1" | jq -r .lease_state; }
# settled ID: a final state, the holder gone (at most 60 s)
settled() {
	local i
	for i in $(seq 300); do
		case $(state "$1") in
		result_ready | failed | cancelled | applied | rejected)
			holder_gone "$1" && return 0 ;;
		esac
		sleep 0.2
	done
	return 1
}
# watch_ls ID OUT: until killed, every 0.3 s: `ls --json`'s lost, lease
# state and journal for ID, one line each, into OUT
watch_ls() {
	while :; do
		"$CORRAL" ls --json 2>/dev/null |
			jq -c --arg id "$1" '.[] | select(.id == $id) |
			    [.lost, .lease_state, .journal]' >>"$2"
		sleep 0.3
	done
}
# hold_lock SECONDS READY: a write transaction on the journal for SECONDS,
# from another process (the sqlite3 shell); READY says "locked" once it
# holds the lock. Run it in the background.
hold_lock() {
	{
		echo ".timeout 20000"
		echo "BEGIN IMMEDIATE;"
		echo "UPDATE ids SET at = at WHERE 0;"
		echo ".print locked"
		sleep "$1"
		echo "ROLLBACK;"
	} | sqlite3 "$DB" >"$2" 2>&1
}
# ls_of ID: the lease's object in `ls --json`
ls_of() { "$CORRAL" ls --json | jq --arg id "$1" '.[] | select(.id == $id)'; }
wait_file() { # FILE TEXT SECONDS
	local i
	for i in $(seq $(($3 * 10))); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
transitions_to() { # ID KIND STATE: a transition row of KIND to STATE
	js "$1" | jq -e --arg k "$2" --arg s "$3" \
		'any(.transitions[]; .kind == $k and .to == $s)' >/dev/null
}

# --- 1. the journal locked for 15 s while a lease runs and finishes --------------
id=$(new -- /bin/sh -c 'echo started; sleep 4; echo change >/work/changed; echo finished')
check "the lease starts" wait_screen "$id" started 30
hpid=$(js "$id" | jq -r .holder_pid)
hstart=$(pid_start "$hpid")
: >"$TMP/ls1"
watch_ls "$id" "$TMP/ls1" &
watcher=$!
hold_lock 15 "$TMP/lock1" &
locker=$!
check "another process holds the journal's write lock" wait_file "$TMP/lock1" locked 20
t0=$(date +%s)
# While the lock is held the agent ends: its holder's writes wait.
check "the agent finishes while the journal is locked" wait_screen "$id" finished 20
waiting() { ls_of "$id" | jq -e '.journal == "waiting" and .lost == null'; }
check "ls: the holder answers, and says it waits for the journal" poll waiting
# reconcile cannot write either (it gives up after its own 5 s), but it
# never takes the waiting holder for a wedged one.
"$CORRAL" reconcile --json >"$TMP/rec1" 2>"$TMP/rec1.err"
check "reconcile (journal locked) does not call the holder lost" \
	bash -c "! grep -Eq 'holder_lost|wedged' '$TMP/rec1' '$TMP/rec1.err'"
check "the holder is not killed" test "$(pid_start "$hpid")" = "$hstart"
check "the lock is still held after all that" test $(($(date +%s) - t0)) -lt 15
check "... and the holder still waits, not lost" waiting
wait "$locker"
t1=$(date +%s)
check "the lock was held at least 12 s" test $((t1 - t0)) -ge 12
check "the lease settles once the lock is gone" settled "$id"
kill "$watcher" 2>/dev/null; wait "$watcher" 2>/dev/null
echo "# ls --json asked $(wc -l <"$TMP/ls1") times around the $((t1 - t0)) s lock;" \
	"lost $(jq -r '.[0]' "$TMP/ls1" | grep -vc null), journal waiting in" \
	"$(jq -r '.[2]' "$TMP/ls1" | grep -c waiting)"
check "ls was asked while the lock was held" test "$(wc -l <"$TMP/ls1")" -ge 10
check "ls never showed the lease lost" test "$(jq -r '.[0]' "$TMP/ls1" | grep -vc null)" = 0
j=$(js "$id")
check "the lease is result_ready" jq_eq "$j" .lease_state result_ready
check "agent_exited is in the receipts" jq -e 'any(.receipts[]; .kind == "agent_exited")' <<<"$j"
check "the done activity is in the transitions" transitions_to "$id" activity done
check "the result is there" jq -e '.result.status == "ready"' <<<"$j"
check "the receipt chain verifies" jq_eq "$j" .receipt.verified true
check "the holder is gone, not killed (it removed itself)" \
	jq -e '[.resources[] | select(.kind == "holder" and .state != "removed")] | length == 0' <<<"$j"
"$CORRAL" reject "$id" >/dev/null 2>&1

# --- 2. the state disk full -------------------------------------------------------
# After the first input it prints 16 kB: the transcript's write fails, and
# the holder's receipt of that is the write that meets the full disk.
id=$(new -- /bin/sh -c 'echo change >/work/changed; sync; echo ready; read a;
	head -c 16384 /dev/zero | tr "\0" x; echo; echo got-one; read b; echo finished')
check "the second lease waits for input" wait_screen "$id" ready 30
sleep 1	# its activity settles at the prompt (no write left in flight)
# The journal's write-ahead log emptied, then every block taken.
sqlite3 "$DB" "PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
dd if=/dev/zero of="$CORRAL_STATE_DIR/fill" bs=1M 2>/dev/null
dd if=/dev/zero of="$CORRAL_STATE_DIR/fill2" bs=4k 2>/dev/null
check "the state directory is full" test "$(df --output=avail -B1 "$CORRAL_STATE_DIR" | tail -1)" -lt 65536
check "input reaches the agent with the disk full" "$CORRAL" send "$id" 'a\r'
check "the agent keeps running" wait_screen "$id" got-one 20
unwritable() {
	"$CORRAL" ls --json | jq -e --arg id "$id" \
		'.[] | select(.id == $id) | .journal == "unwritable" and .lost == null'
}
check "ls --json says the journal is unwritable" poll unwritable
check "ls says journal_unwritable" bash -c "'$CORRAL' ls | grep -F '$id' | grep -q journal_unwritable"
check "the agent ends with the disk full" "$CORRAL" send "$id" 'b\r'
check "... it prints its last line" wait_screen "$id" finished 20
sleep 2	# the holder now holds what it could not write
check "the lease is not recorded as ended yet" jq_eq "$(js "$id")" .lease_state running
check "... and still not lost" unwritable
rm -f "$CORRAL_STATE_DIR/fill" "$CORRAL_STATE_DIR/fill2"
check "once space returns, the lease settles" settled "$id"
j=$(js "$id")
check "its result was extracted" jq -e '.result.status == "ready"' <<<"$j"
check "the result holds the agent's change" \
	test "$(git -C "$REPO" show "$(jq -r .result.commit <<<"$j")":changed 2>/dev/null)" = change
check "agent_exited is in its receipts" jq -e 'any(.receipts[]; .kind == "agent_exited")' <<<"$j"
check "its receipt chain verifies" jq_eq "$j" .receipt.verified true
"$CORRAL" reject "$id" >/dev/null 2>&1

# --- 2b. the state disk fills while the result is extracted, or checked -------------
# The holder stops at a point of its finish (CORRAL_FAULT_WAIT), the disk
# is filled, the holder goes on: the extraction (or the check's copy)
# meets the full disk. The lease stays running with its workspace kept,
# ls says journal_unwritable, and once space returns the retried finish
# makes the result: nothing is lost (a full disk failed it result_error).
export CORRAL_FAULT_DIR=$TMP/fault
mkdir -p "$CORRAL_FAULT_DIR"
fill_disk() {
	sqlite3 "$DB" "PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
	dd if=/dev/zero of="$CORRAL_STATE_DIR/fill" bs=1M 2>/dev/null
	dd if=/dev/zero of="$CORRAL_STATE_DIR/fill2" bs=4k 2>/dev/null
	test "$(df --output=avail -B1 "$CORRAL_STATE_DIR" | tail -1)" -lt 65536
}
# full_finish TAG POINT [new options]: a lease that writes 2 MB of noise
# (base64: text the gate takes), its finish stopped at POINT while the
# disk fills
full_finish() {
	local tag=$1 point=$2 i
	shift 2
	rm -f "$CORRAL_FAULT_DIR/$point".*
	id=$(CORRAL_FAULT_WAIT=$point new "$@" -- /bin/sh -c \
		'head -c 1536000 /dev/urandom | base64 >/work/noise; echo done-writing')
	check "($tag) the lease starts" valid_id "$id"
	for i in $(seq 600); do
		[ -e "$CORRAL_FAULT_DIR/$point.reached" ] && break
		sleep 0.1
	done
	check "($tag) its holder reached $point" test -e "$CORRAL_FAULT_DIR/$point.reached"
	check "($tag) the state directory is full" fill_disk
	touch "$CORRAL_FAULT_DIR/$point.go"
	check "($tag) ls says journal_unwritable while the finish waits" poll unwritable
	check "($tag) the lease is still running (not failed)" \
		jq_eq "$(js "$id")" .lease_state running
	checkd "($tag) its holder is alive" "holder_diag $id" holder_alive "$id"
	rm -f "$CORRAL_STATE_DIR/fill" "$CORRAL_STATE_DIR/fill2"
	check "($tag) once space returns, the lease settles" settled "$id"
	j=$(js "$id")
	jq_eq "$j" .lease_state result_ready || jq -c '{s: .lease_state, why: .reason,
	    r: .result.status, rc: [.receipts[] | {kind, fields}] | .[-8:]}' <<<"$j"
	check "($tag) it is result_ready" jq_eq "$j" .lease_state result_ready
	check "($tag) its result holds the 2 MB the agent wrote" test "$(git -C "$REPO" \
		cat-file -s "$(jq -r .result.commit <<<"$j")":noise 2>/dev/null)" -gt 2048000
	check "($tag) result_waiting, then result_resumed, in its receipts" jq -e \
		'[.receipts[].kind | select(. == "result_waiting" or . == "result_resumed")] ==
		["result_waiting", "result_resumed"]' <<<"$j"
	check "($tag) its receipt chain verifies" jq_eq "$j" .receipt.verified true
}
holder_alive() { ! holder_gone "$1"; }
# holder_diag ID: what the lease's receipts say of its holder, and /proc
holder_diag() {
	local j pid
	j=$("$CORRAL" show "$1" --json)
	echo "show rc=$? df=$(df --output=avail -B1 "$CORRAL_STATE_DIR" | tail -1)"
	jq -c '[.receipts[] | {kind, fields}] | .[-6:]' <<<"$j"
	for pid in $(jq -r '.receipts[] | select(.kind == "holder_started") |
	    .fields.holder_pid' <<<"$j"); do
		echo "pid $pid: $(cat "/proc/$pid/stat" 2>&1)"
	done
}
full_finish extract result.extract.before
"$CORRAL" reject "$id" >/dev/null 2>&1
printf '[checks]\nsees = test -s noise\n' >"$TMP/checks.ini"
full_finish check result.checks.before --policy "$TMP/checks.ini"
check "(check) the check ran once space returned, and passed" \
	jq_eq "$(js "$id")" '[.result.checks[] | "\(.name) \(.status)"] | join(",")' "sees pass"
"$CORRAL" reject "$id" >/dev/null 2>&1
unset CORRAL_FAULT_WAIT

# --- 3. corral new killed while its holder starts, then reconcile ----------------
# start_paused NAME: `corral new` whose holder stops before it takes the
# lease; new is killed there. Prints the lease ID.
start_paused() {
	local pid i id=""
	rm -f "$CORRAL_FAULT_DIR"/holder.claim.before.*
	(cd "$REPO" && CORRAL_FAULT_WAIT=holder.claim.before exec "$CORRAL" new \
		--sandbox trusted_local --name "$1" -- /bin/sh -c \
		'echo agent-ran; while :; do sleep 1; done') >/dev/null 2>&1 &
	pid=$!
	for i in $(seq 300); do
		[ -e "$CORRAL_FAULT_DIR/holder.claim.before.reached" ] && break
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	"$CORRAL" ls --json | jq -r --arg n "$1" '.[] | select(.name == $n) | .id'
}

# (a) reconcile first: the lease fails, the holder then finds it taken.
id=$(start_paused race-a)
check "(a) the lease is provisioning, no holder recorded" \
	jq_eq "$(js "$id")" '"\(.lease_state) \(.holder_pid)"' "provisioning null"
"$CORRAL" reconcile >/dev/null 2>&1
check "(a) reconcile fails it (provisioning_interrupted)" \
	jq_eq "$(js "$id")" '"\(.lease_state) \(.failed_reason)"' "failed provisioning_interrupted"
hp=$(cat "$CORRAL_FAULT_DIR/holder.claim.before.reached")
hs=$(pid_start "$hp")
touch "$CORRAL_FAULT_DIR/holder.claim.before.go"
check "(a) the holder ends" poll pid_gone "$hp" "$hs"
j=$(js "$id")
check "(a) its agent never ran" \
	jq -e 'all(.receipts[]; .kind != "holder_started" and .kind != "agent_exited")' <<<"$j"
check "(a) the lease stays failed, no holder recorded" \
	jq_eq "$j" '"\(.lease_state) \(.holder_pid)"' "failed null"

# (b) reconcile has judged it interrupted when the holder takes it.
id=$(start_paused race-b)
rm -f "$CORRAL_FAULT_DIR"/reconcile.interrupted.judged.*
CORRAL_FAULT_WAIT=reconcile.interrupted.judged "$CORRAL" reconcile --json >"$TMP/rec3" 2>&1 &
rec=$!
check "(b) reconcile read it provisioning with no holder" \
	poll test -e "$CORRAL_FAULT_DIR/reconcile.interrupted.judged.reached"
touch "$CORRAL_FAULT_DIR/holder.claim.before.go"
running_b() { jq_eq "$(js "$id")" .lease_state running; }
check "(b) the holder takes the lease meanwhile" poll running_b
touch "$CORRAL_FAULT_DIR/reconcile.interrupted.judged.go"
wait "$rec"
j=$(js "$id")
check "(b) reconcile leaves the running lease alone" jq_eq "$j" .lease_state running
check "(b) ... and says its holder is alive" \
	jq -e --arg id "$id" 'any(.findings[]; .id == $id and .kind == "live")' "$TMP/rec3"
check "(b) its agent runs" wait_screen "$id" agent-ran 20
check "(b) ls shows it, not lost" \
	jq -e --arg id "$id" '.[] | select(.id == $id) | .lost == null' <<<"$("$CORRAL" ls --json)"
hp=$(js "$id" | jq -r .holder_pid)
kill -TERM "$hp"
check "(b) its holder ends it on SIGTERM" settled "$id"
check "(b) it ends cancelled" jq_eq "$(js "$id")" .lease_state cancelled
unset CORRAL_FAULT_DIR
finish
