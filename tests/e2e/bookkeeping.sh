#!/usr/bin/env bash
# bookkeeping.sh: what an agent in a real sandboxed (bwrap) lease can make
# the host's side do, judged from the host (issue 15): an agent that
# floods its terminal with DA queries (ESC [ c) and never reads the
# replies makes a bounded number of receipts (the first of each kind, then
# one journal_summary counting the rest), and `show` of that lease stays
# small; an agent flipping blocked/working as fast as it can runs the
# operator's [notify] hook once per change at most, one run at a time, the
# interval apart (the default, 10 s: a run for the first blocked, one for
# done at the end).
set -u
. "$(dirname "$0")/lib.bash"

needs_root
REPO=$TMP/app
new_repo "$REPO"
printf 'hello\n' >"$REPO/README"
git -C "$REPO" add -A && git -C "$REPO" commit -qm base
mkdir -p "$XDG_CONFIG_HOME/corral"
cat >"$XDG_CONFIG_HOME/corral/policy.ini" <<'EOF'
[limits]
wall_time = 120s
EOF
js() { "$CORRAL" show "$1" --json; }
# agent NAME SCRIPT: a sandboxed lease running sh -c SCRIPT; prints its ID
agent() {
	(cd "$REPO" && "$CORRAL" new --sandbox bwrap --name "$1" -- /bin/sh -c "$2")
}
# ended ID: the agent ended and its holder is gone (its hooks waited for)
ended() {
	"$CORRAL" wait "$1" --until done,failed,cancelled,result_ready \
		--timeout 150 >/dev/null 2>&1
	poll holder_gone "$1"
}

CALLS=$TMP/calls
cat >"$TMP/hook.sh" <<EOF
#!/bin/sh
echo "start \$2" >>"$CALLS.\$1"
sleep 0.3
echo "end \$2" >>"$CALLS.\$1"
EOF
chmod 0755 "$TMP/hook.sh"
printf '[notify]\nhook = %s\non = blocked, done, failed\n' "$TMP/hook.sh" \
	>"$XDG_CONFIG_HOME/corral/config"

# --- receipts: a DA flood, never read ----------------------------------------------
# 250,000 queries (1 MB) from a raw terminal: the replies fill the
# agent's input, then the holder's 1 MiB queue, and the rest are dropped
da=$(agent flooder 'stty raw -echo; yes "$(printf "\033[c")" | head -c 1000000; exit 0')
valid_id "$da" || fail "the flooding lease did not start: $da"

# --- the notification hook -------------------------------------------------------
# 4 s of reports, 20 changes a second, then exit 0
flip=$(agent flipper 'i=0; while [ $i -lt 40 ]; do
	printf "\033]7717;corral-report;blocked\a"; sleep 0.05
	printf "\033]7717;corral-report;working\a"; sleep 0.05
	i=$((i + 1)); done')
valid_id "$flip" || fail "the flipping lease did not start: $flip"
ended "$flip" || fail "the flipping lease did not end"
CALLS=$CALLS.$flip
runs=$(grep -c '^start' "$CALLS" 2>/dev/null)
echo "# notify hook runs: ${runs:-0}; activity events: $(js "$flip" |
	jq '[.transitions[] | select(.kind == "activity")] | length')"
check "the hook ran for the first blocked" \
	bash -c "head -1 '$CALLS' | grep -qx 'start blocked'"
check "the hook ran at most twice in 4 s of flips (the 10 s interval; ran ${runs:-0})" \
	test "${runs:-0}" -le 2
check "the hook ran for done at the end" \
	bash -c "tail -2 '$CALLS' | grep -qx 'start done'"
check "never two hook runs at a time" \
	awk '/^start/ { if (open) exit 1; open = 1 } /^end/ { open = 0 }' "$CALLS"

ended "$da" || fail "the flooding lease did not end"
j=$(js "$da")
n=$(echo "$j" | jq '.receipts | length')
drops=$(echo "$j" | jq '[.receipts[] | select(.kind == "input")] | length')
bytes=$(echo "$j" | jq '[.receipts[], .transitions[] | tojson | length] | add')
unrec=$(echo "$j" | jq '[.receipts[] | select(.kind == "journal_summary")][0].fields.unrecorded.input // 0')
echo "# DA flood: $n receipts ($drops of dropped replies, $unrec counted only), $bytes bytes of journal entries, journal file $(du -cb "$CORRAL_STATE_DIR"/corral.db* | tail -1 | cut -f1) bytes"
check "the flood's dropped replies make at most 64 receipts ($drops)" \
	test "$drops" -le 64
check "the lease's receipts stay few ($n)" test "$n" -le 400
check "journal_summary counts the dropped replies not written ($unrec)" \
	test "$unrec" -gt 0
check "the lease's journal entries stay under 512 kB ($bytes bytes)" \
	test "$bytes" -le 524288
check "the receipt chain verifies" jq_eq "$j" .receipt.verified true
check "show lists every receipt of the capped lease" \
	jq_eq "$j" '"\(.receipts_omitted) \(.transitions_omitted)"' "0 0"
check "show prints the flooded lease" \
	bash -c "'$CORRAL' show '$da' | grep -q '^transitions:'"
finish
