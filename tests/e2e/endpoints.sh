#!/usr/bin/env bash
# endpoints.sh: the first commands against live holders, through the real
# binary (issue 2, SPEC 2, 3, 11): new/ls/screen/send/cancel, refusal
# without --allow-control, holder survival after the starter is SIGKILLed,
# reattach with identical cells/attributes/cursor/modes, lost holders (dead
# and wedged) shown without hanging, bad input with the right exit codes.
set -u
. "$(dirname "$0")/lib.bash"

AGENT="$CORRAL_FIXTURES/fake_agent"

# --- bad input ---------------------------------------------------------------
expect_rc 2 "unknown command" "$CORRAL" frobnicate
expect_rc 2 "unknown flag" "$CORRAL" ls --frob
expect_rc 2 "new without command" "$CORRAL" new --sandbox trusted_local
expect_rc 0 "--help" "$CORRAL" --help
expect_rc 0 "new --help" "$CORRAL" new --help
expect_rc 0 "--version" "$CORRAL" --version
# The default sandbox is bwrap (SPEC 3): outside a git repository it fails
# with a named reason and creates nothing; inside one it runs sandboxed
# (tests/e2e/sandbox.sh and tests/adversarial cover it in depth).
mkdir -p "$TMP/norepo"
out=$(cd "$TMP/norepo" && "$CORRAL" new -- /bin/true 2>&1); rc=$?
check "default sandbox outside a repository: a named error, exit 1" \
	test "$rc" -eq 1 -a -n "$(echo "$out" | grep -i 'not a git repository')"
check "... and it created nothing" \
	test -z "$(ls "$CORRAL_STATE_DIR/leases" "$CORRAL_STATE_DIR/worktrees" 2>/dev/null)"
check "... and the lease is journaled failed: not_a_repository" jq_eq \
	"$("$CORRAL" ls --all --json)" '.[0] | "\(.lease_state) \(.mode)"' \
	"failed sandboxed"
git init -q "$TMP/repo" && git -C "$TMP/repo" -c user.email=e@x -c user.name=e \
	commit -q --allow-empty -m base
sid=$(cd "$TMP/repo" && "$CORRAL" new --name sbx -- /bin/sh -c 'echo in-sandbox; id -un')
check "inside one the default lease runs sandboxed" jq_eq \
	"$("$CORRAL" show "$sid" --json)" '"\(.mode) \(.adapter)"' "sandboxed bwrap"
check "... as the sandbox user" wait_screen "$sid" "sbx"
"$CORRAL" wait "$sid" --until result_ready,failed --timeout 30 >/dev/null
out=$("$CORRAL" new --sandbox command -- /bin/true 2>&1); rc=$?
check "the command adapter is refused with a clear message, no fallback" \
	test "$rc" -eq 1 -a -n "$(echo "$out" | grep -i 'no fallback')"
known=$("$CORRAL" ls --all --json | jq -c '[.[].id]')
out=$("$CORRAL" new --sandbox trusted_local -- /nonexistent/agent 2>&1); rc=$?
check "missing CMD fails with a clear error" \
	test "$rc" -eq 1 -a -n "$(echo "$out" | grep -i 'No such file')"
mid=$("$CORRAL" ls --all --json | jq -r --argjson k "$known" \
	'[.[] | .id as $i | select($k | index($i) | not)][0].id // empty')
# The holder reports the error, then exits: none may be left once it has
# (a deadline, not a bare sleep; it is reaped at once in practice). It
# never recorded its PID (it did not start), so it is found by its log,
# which a holder of the lease keeps open.
no_holder() {
	local i
	[ -n "$mid" ] && [ -e "$CORRAL_STATE_DIR/leases/$mid/holder.log" ] || return 1
	for i in $(seq 100); do
		[ -z "$(holding "$CORRAL_STATE_DIR/leases/$mid/holder.log")" ] && return 0
		sleep 0.05
	done
	return 1
}
check "no orphan holder for the missing CMD" no_holder

# --- new, ls, screen, send ------------------------------------------------------
id=$("$CORRAL" new --sandbox trusted_local --allow-control --name alpha -- "$AGENT")
check "new prints a lease ID" valid_id "$id"
check "ls --json lists it as trusted_local, running" \
	jq_eq "$("$CORRAL" ls --json)" \
	".[] | select(.id==\"$id\") | \"\(.mode) \(.lease_state) \(.name)\"" \
	"trusted_local running alpha"
wait_screen "$id" "ready" || fail "agent output never reached the screen"
"$CORRAL" send "$id" 'echo hello\r'
check "send types into the agent" wait_screen "$id" "got: hello"
"$CORRAL" send "$id" 'color\r'
wait_screen "$id" "red green rgb"
js=$("$CORRAL" screen "$id" --json)
check "screen --json keeps attributes (bold red run)" \
	test -n "$(echo "$js" | jq '.lines[] | .runs[] | select(.attrs==1)' )"
check "name works as well as the ID" "$CORRAL" screen alpha

# --- screen --scrollback: the scrollback, then the screen of the same moment ----
# (issue 22: it printed only the scrollback, exited 1 and said "no live
# holder" when the screen came before the scrollback's answer.)
"$CORRAL" send "$id" 'spam 300\r'
wait_screen "$id" "line 299" || fail "spam never reached the screen"
# Each of the 300 lines exactly once, in order, across scrollback and screen.
once_in_order() {
	grep -o '^line [0-9]*$' <<<"$1" | awk '{ if ($2 != n) exit 1; n++ }
		END { exit n != 300 }'
}
sb_ok=0 sb_whole=0
for _ in $(seq 20); do
	out=$("$CORRAL" screen "$id" --scrollback 2>&1) && sb_ok=$((sb_ok + 1))
	once_in_order "$out" && sb_whole=$((sb_whole + 1))
done
check "screen --scrollback on a live lease: 20 of 20 exit 0" test "$sb_ok" -eq 20
check "... each shows every line once, in order" test "$sb_whole" -eq 20
js=$("$CORRAL" screen "$id" --scrollback --json)
check "... --json too: the scrollback and the screen" test "$(jq -r \
	'[.scrollback[], .lines[].text] | map(select(test("^line [0-9]+$")))
	 | length' <<<"$js")" = 300
# While the agent writes, the answer is still whole (no line lost or twice).
"$CORRAL" send "$id" 'spam 300\r'
out=$("$CORRAL" screen "$id" --scrollback 2>&1); rc=$?
check "screen --scrollback while the agent writes: exit 0" test "$rc" -eq 0
"$CORRAL" send "$id" 'echo hello\r'
wait_screen "$id" "got: hello" || fail "the echo never reached the screen"

# --- the holder's malloc keeps no per-thread cache (issue 17) ------------------
# spawn.c execs the holder with GLIBC_TUNABLES (unless the operator set
# one); the holder takes it out before it starts the agent. /proc's environ
# is a process's environment as it was exec'd.
hp=$("$CORRAL" ls --json | jq -r ".[] | select(.id==\"$id\") | .holder_pid")
ap=$(cut -d' ' -f1 "/proc/$hp/task/$hp/children" 2>/dev/null)
env_of() { tr '\0' '\n' <"/proc/$1/environ"; }
check "the holder was exec'd with the malloc tunables" grep -qx \
	"GLIBC_TUNABLES=${GLIBC_TUNABLES:-glibc.malloc.tcache_count=0}" \
	<(env_of "$hp")
check "... which its agent (pid ${ap:-none}) does not inherit" bash -c \
	"[ -n '$ap' ] && ! tr '\0' '\n' </proc/$ap/environ | grep -q \
	'^CORRAL_HOLDER_TUNED=\|^GLIBC_TUNABLES=glibc.malloc.tcache_count=0$'"

# --- refusal without --allow-control --------------------------------------------
id2=$("$CORRAL" new --sandbox trusted_local --name beta -- "$AGENT")
wait_screen "$id2" "ready"
out=$("$CORRAL" send "$id2" 'echo nope\r' 2>&1); rc=$?
check "send refused without --allow-control" test "$rc" -eq 1
check "refusal names the reason" grep -q "allow" <<<"$out"
out=$("$CORRAL" cancel "$id2" 2>&1); rc=$?
check "cancel refused without --allow-control" test "$rc" -eq 1
check "the refused input never reached the agent" \
	bash -c "! '$CORRAL' screen '$id2' | grep -q 'got: nope'"

# --- holder survival: SIGKILL the process that started three endpoints ---------
starter_out="$TMP/starter.out"
setsid bash -c "
	for n in s1 s2 s3; do
		'$CORRAL' new --sandbox trusted_local --allow-control --name \$n -- '$AGENT' >>'$starter_out'
	done
	sleep 1000" &
spid=$!
for _ in $(seq 100); do [ "$(wc -l <"$starter_out" 2>/dev/null)" = 3 ] && break; sleep 0.1; done
kill -9 -- -"$spid" 2>/dev/null; kill -9 "$spid" 2>/dev/null
wait "$spid" 2>/dev/null
check "three endpoints were started" test "$(wc -l <"$starter_out")" = 3
for s in $(cat "$starter_out"); do
	check "endpoint $s survives its starter" wait_screen "$s" "ready"
	"$CORRAL" send "$s" 'title kept\r'
	"$CORRAL" send "$s" 'color\r'
	wait_screen "$s" "red green rgb"
done
s1=$(head -1 "$starter_out")
before=$("$CORRAL" screen "$s1" --json)
after=$("$CORRAL" screen "$s1" --json)
check "a new reader sees identical cells, attributes, cursor and modes" \
	test "$before" = "$after"
check "the title survived" jq_eq "$after" .title "kept"

# --- lost holders: dead and wedged -----------------------------------------------
s2=$(sed -n 2p "$starter_out"); s3=$(sed -n 3p "$starter_out")
hp2=$("$CORRAL" ls --json | jq -r ".[] | select(.id==\"$s2\") | .holder_pid")
hp3=$("$CORRAL" ls --json | jq -r ".[] | select(.id==\"$s3\") | .holder_pid")
kill -9 "$hp2"
kill -STOP "$hp3"
t0=$(date +%s%N)
ls_json=$(timeout 20 "$CORRAL" ls --json); rc=$?
t1=$(date +%s%N)
kill -CONT "$hp3"
check "ls does not hang on a wedged holder" test "$rc" -eq 0
check "ls answers within 5 s" test $(( (t1 - t0) / 1000000 )) -lt 5000
check "dead holder shows as lost with a reason" \
	test -n "$(echo "$ls_json" | jq -r ".[] | select(.id==\"$s2\") | .lost // empty")"
check "wedged holder shows as lost (did not answer)" \
	grep -q "did not answer" <<<"$(echo "$ls_json" | jq -r ".[] | select(.id==\"$s3\") | .lost // empty")"

# --- cancel -------------------------------------------------------------------------
check "cancel ends the agent" "$CORRAL" cancel "$id"
check "the cancelled lease is recorded" jq_eq "$("$CORRAL" ls --all --json)" \
	".[] | select(.id==\"$id\") | \"\(.lease_state) \(.activity)\"" \
	"cancelled cancelled"
check "screen after the end shows the final screen" wait_screen "$id" "got: hello"
out=$("$CORRAL" screen "$id" --scrollback 2>&1); rc=$?
check "screen --scrollback on a finished lease: exit 0, the lines once" \
	bash -c "[ $rc -eq 0 ] && grep -c '^line 299\$' <<<'$out' | grep -qx 2"
check "show --json verifies the receipt chain" jq_eq \
	"$("$CORRAL" show "$id" --json)" .receipt.verified true

finish
