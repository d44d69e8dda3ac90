#!/usr/bin/env bash
# lifecycle.sh: lifecycle detection through the real binary (issue 4, SPEC
# 5.2-5.6, 11): a command in the foreground of `bash -i` is working, not
# prompt, with the exact journaled timeline; `wait`, `explain`, `events
# --json`; unseen marks cleared only by an operator looking on a terminal;
# cancel's escalation steps with their times in the receipt; the operator's
# notification hook run by the holder on blocked, done and failed, with
# agent text kept out of its command line; a malformed config named by file
# and line, the defaults used.
set -u
. "$(dirname "$0")/lib.bash"

export HISTFILE=/dev/null
FIX="$CORRAL_SRC/tests/fixtures/agents"

# The activity transitions of a lease, as "from>to from>to ...".
timeline() {
	"$CORRAL" events --json | jq -r --arg id "$1" \
		'select(.id == $id and .kind == "activity") | "\(.from)>\(.to)"' |
		tr '\n' ' ' | sed 's/ $//'
}

# jq FILTER on the lease's `ls --all --json` object.
lease_field() {
	"$CORRAL" ls --all --json | jq -r --arg id "$1" ".[] | select(.id == \$id) | $2"
}

# run CMD... on a terminal (what an operator sees), output discarded
on_tty() { script -qec "$*" /dev/null >/dev/null 2>&1; }

# --- a command in the foreground of an interactive shell -----------------------
id=$("$CORRAL" new --sandbox trusted_local --allow-control --name sh1 -- \
	bash --norc --noprofile -i)
check "bash -i reaches prompt" "$CORRAL" wait "$id" --until prompt --timeout 10
# It runs until Ctrl-C after the checks: a short sleep could end before a
# loaded machine's first sample of the foreground.
"$CORRAL" send "$id" 'sleep 60\r'
check "sleep typed at the prompt is working" "$CORRAL" wait "$id" --until working --timeout 30
ex=$("$CORRAL" explain "$id" --json)
check "explain: decided by the foreground's terminal wait" \
	jq_eq "$ex" '.signal' "fact:no-tty-wait"
check "explain: the evidence names sleep" \
	grep -q "foreground sleep, not in a tty read, not waiting on the terminal" <<<"$(jq -r .explain <<<"$ex")"
"$CORRAL" send "$id" '\x03'
check "back at the prompt when sleep ends (Ctrl-C)" "$CORRAL" wait "$id" --until prompt --timeout 10
"$CORRAL" send "$id" 'echo quick\r'
"$CORRAL" send "$id" 'exit\r'
check "exit is done" "$CORRAL" wait "$id" --until done --timeout 10
tl=$(timeline "$id")
check "exact timeline: starting working prompt working prompt done ($tl)" \
	test "$tl" = "starting>working working>prompt prompt>working working>prompt prompt>done"
check "the prompt->working step is journaled with its signal" \
	test -n "$("$CORRAL" events --json | jq -r --arg id "$id" \
		'select(.id == $id and .to == "working" and .from == "prompt") | .reason' |
		grep 'fact:no-tty-wait: sleep is not waiting on the terminal')"

# wait's exit codes: reached (0), timeout (124), ended otherwise (3)
expect_rc 0 "wait: already done" "$CORRAL" wait "$id" --until done,failed
expect_rc 3 "wait: ended in a state not asked for" "$CORRAL" wait "$id" --until blocked
id2=$("$CORRAL" new --sandbox trusted_local --allow-control -- sleep 30)
expect_rc 124 "wait: timeout" "$CORRAL" wait "$id2" --until blocked --timeout 1
check "a lone sleep is working, never prompt" jq_eq \
	"$("$CORRAL" explain "$id2" --json)" .activity working
"$CORRAL" cancel "$id2" >/dev/null

# --- unseen (SPEC 5.2) ---------------------------------------------------------
idf=$("$CORRAL" new --sandbox trusted_local --name broke -- sh -c 'echo oops; sleep 0.3; exit 4')
check "a failing agent is failed" "$CORRAL" wait "$idf" --until failed --timeout 10
check "failed is unseen" test "$(lease_field "$idf" .unseen)" = true
check "ls --json shows unseen" test "$(lease_field "$idf" '"\(.activity) \(.unseen)"')" = "failed true"
"$CORRAL" show "$idf" >/dev/null
"$CORRAL" screen "$idf" >/dev/null
"$CORRAL" show "$idf" --json >/dev/null
check "show/screen into a pipe (a script) leave it unseen" \
	test "$(lease_field "$idf" .unseen)" = true
on_tty "$CORRAL" screen --json "$idf"
check "screen --json on a terminal leaves it unseen" \
	test "$(lease_field "$idf" .unseen)" = true
on_tty "$CORRAL" show "$idf"
check "show on a terminal marks it seen" test "$(lease_field "$idf" .unseen)" = false
idd=$("$CORRAL" new --sandbox trusted_local -- sh -c 'echo fine; sleep 0.3')
check "a finishing agent is done" "$CORRAL" wait "$idd" --until done --timeout 10
check "done is unseen" test "$(lease_field "$idd" .unseen)" = true
on_tty "$CORRAL" screen "$idd"
check "screen on a terminal marks it seen" test "$(lease_field "$idd" .unseen)" = false
check "a cancelled lease is not unseen" test "$(lease_field "$id2" .unseen)" = false

# --- cancelled, with the escalation recorded (SPEC 5.5) ------------------------
idc=$("$CORRAL" new --sandbox trusted_local --allow-control -- \
	sh -c "trap '' INT TERM; echo stubborn; while :; do sleep 1; done")
wait_screen "$idc" stubborn
"$CORRAL" cancel "$idc" >/dev/null
check "cancel: activity cancelled" test "$(lease_field "$idc" .activity)" = cancelled
check "cancel: lease state cancelled" test "$(lease_field "$idc" .lease_state)" = cancelled
sj=$("$CORRAL" show "$idc" --json)
steps=$(jq -r '.receipts[] | select(.kind == "cancel") | .fields.detail' <<<"$sj" |
	sed -n 's/^sent \(SIG[A-Z]*\) to [0-9]* target(s) at \([0-9]*\)$/\1 \2/p')
check "receipt: SIGINT, SIGTERM, SIGKILL in order" \
	test "$(awk '{print $1}' <<<"$steps" | tr '\n' ' ')" = "SIGINT SIGTERM SIGKILL "
t=($(awk '{print $2}' <<<"$steps"))
check "receipt: each step's time, about 2 s apart (${t[*]})" \
	test "${#t[@]}" = 3 -a $((t[1] - t[0])) -ge 1900 -a $((t[2] - t[1])) -ge 1900 \
		-a $((t[2] - t[0])) -lt 10000
check "receipt: the exit, cancelled" \
	jq_eq "$sj" '[.receipts[] | select(.kind == "agent_exited")][0].fields.cancelled' true
check "receipt chain verifies" jq_eq "$sj" .receipt.verified true
check "events: running -> cancelled" test -n "$("$CORRAL" events --json |
	jq -r --arg id "$idc" 'select(.id == $id and .to == "cancelled")')"

# --- notifications: the operator's hook, run by the holder (SPEC 5.6) ---------
mkdir -p "$XDG_CONFIG_HOME/corral"
calls="$TMP/calls"
cat >"$TMP/hook.sh" <<'EOF'
#!/bin/sh
printf '%s|%s|%s|%s|%s|%s\n' "$1" "$2" "$3" "$CORRAL_LEASE_ID" "$CORRAL_STATE" "$CORRAL_DETAIL" >>"$CALLS"
EOF
chmod +x "$TMP/hook.sh"
export CALLS="$calls"
cat >"$XDG_CONFIG_HOME/corral/config" <<EOF
# corral config (test)
[notify]
hook = $TMP/hook.sh
on = blocked, done, failed
timeout = 5
EOF
export PWNED="$TMP/pwned"
idn=$("$CORRAL" new --sandbox trusted_local --allow-control --name asker -- \
	bash --norc -c 'read -p "Overwrite \$(touch $PWNED)? [y/N] " a; [ "$a" = y ]')
check "a y/N question is blocked" "$CORRAL" wait "$idn" --until blocked --timeout 10
for _ in $(seq 100); do grep -q "|blocked|" "$calls" 2>/dev/null && break; sleep 0.05; done
check "hook ran on blocked with ID, state and name" grep -qx "$idn|blocked|asker|$idn|blocked|.*" "$calls"
check "hook got the agent's row in its environment only" \
	grep -q 'Overwrite $(touch .*pwned)? \[y/N\]' "$calls"
check "agent text never ran as a command" test ! -e "$TMP/pwned"
"$CORRAL" send "$idn" 'y\r'
check "answered: done" "$CORRAL" wait "$idn" --until done --timeout 10
for _ in $(seq 100); do grep -q "|done|" "$calls" 2>/dev/null && break; sleep 0.05; done
check "hook ran on done" grep -qx "$idn|done|asker|$idn|done|.*" "$calls"
idx=$("$CORRAL" new --sandbox trusted_local --name crash -- sh -c 'echo x; sleep 0.3; exit 9')
"$CORRAL" wait "$idx" --until failed --timeout 10 >/dev/null
for _ in $(seq 100); do grep -q "|failed|" "$calls" 2>/dev/null && break; sleep 0.05; done
check "hook ran on failed" grep -qx "$idx|failed|crash|$idx|failed|.*" "$calls"
check "the hook's run is in holder.log" \
	grep -q "hook for failed started" "$CORRAL_STATE_DIR/leases/$idx/holder.log"
check "no hook for working or prompt" \
	test "$(grep -c "^$idn|" "$calls")" = 2

# a malformed config: named by file and line; the defaults (no hook) used
cat >"$XDG_CONFIG_HOME/corral/config" <<EOF
[notify]
hook = $TMP/hook.sh
bell = loud
EOF
: >"$calls"
idm=$("$CORRAL" new --sandbox trusted_local --name cfgbad -- sh -c 'echo x; sleep 0.3; exit 2')
"$CORRAL" wait "$idm" --until failed --timeout 10 >/dev/null
# The holder's exit is the marker: it reaps every hook it ran first.
check "malformed config: the holder ends" poll holder_gone "$idm"
check "malformed config: file and line in holder.log" \
	grep -q "corral/config:3: bad bell 'loud'" "$CORRAL_STATE_DIR/leases/$idm/holder.log"
check "malformed config: defaults, so no hook ran" test ! -s "$calls"
check "... none started (holder.log)" bash -c "! grep -q 'hook for' '$CORRAL_STATE_DIR/leases/$idm/holder.log'"
rm -f "$XDG_CONFIG_HOME/corral/config"

finish
