#!/usr/bin/env bash
# demo.sh: `corral demo` through the real binary (issue 9 item 1, SPEC 5.2,
# 7, 9.2, 11): headless (--no-console), it makes a throwaway repository
# and starts four bwrap leases and one trusted_local; each shows its state
# (working, blocked, done with a result, failed, an egress attempt
# denied); the operator answers, reviews and applies one patch, rejects
# the rest, cancels the spinner and reconciles; then nothing of the
# runtime is left on the host (holders, cgroups, mounts, uid slots,
# sockets, workspaces, worktrees) while results and history remain. In
# tmux, `corral demo` opens the console, and quitting it leaves the agents
# running.
set -u
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/../acceptance/host.bash"
export LC_ALL=C.UTF-8

needs_root "bwrap leases"
command -v tmux >/dev/null || { echo "tmux is required (scripts/packages.txt)"; exit 1; }
TS="corral-demo-$$"
t() { tmux -L "$TS" "$@"; }
trap 't kill-server 2>/dev/null; cleanup' EXIT

# --- headless: the repository and five leases ----------------------------------
out=$("$CORRAL" demo </dev/null 2>&1); rc=$?
check "without a terminal, corral demo refuses (exit 1)" test "$rc" = 1
check "... and names --no-console" grep -q -- --no-console <<<"$out"
check "... having started nothing" test ! -e "$CORRAL_STATE_DIR/demo"
T0=$(date +%s)
out=$("$CORRAL" demo --no-console --json); rc=$?
check "demo --no-console exits 0" test "$rc" -eq 0
REPO=$(jq -r .repository <<<"$out")
id_of() { jq -r --arg n "$1" '.leases[] | select(.name == $n) | .id' <<<"$out"; }
SPIN=$(id_of demo-spinner) ASK=$(id_of demo-question) FIN=$(id_of demo-finisher)
FAILED=$(id_of demo-failing) EGR=$(id_of demo-egress)
ALL="$SPIN $ASK $FIN $FAILED $EGR"
check "it prints five valid lease IDs" bash -c "n=0; for i in $ALL; do
	[[ \$i =~ ^[0-9]{8}-[0-9]{6}-[0-9]{3}-[0-9a-f]{4}\$ ]] && n=\$((n+1)); done; [ \$n = 5 ]"
check "the throwaway repository is under the state directory" \
	test "${REPO#"$CORRAL_STATE_DIR"/demo/}" != "$REPO" -a -d "$REPO/.git"
check "... with one commit on main, checked out nowhere" bash -c \
	"[ \$(git -C '$REPO' rev-list --count main) = 1 ] && ! git -C '$REPO' symbolic-ref -q HEAD"
BASE=$(git -C "$REPO" rev-parse main)
ls_js=$("$CORRAL" ls --json)
check "the spinner is trusted_local, the other four bwrap" jq_eq "$ls_js" \
	"[.[] | select(.id == \"$SPIN\" or .id == \"$ASK\" or .id == \"$FIN\" or
	  .id == \"$FAILED\" or .id == \"$EGR\") | \"\(.name)=\(.mode)/\(.adapter)\"] | sort | join(\" \")" \
	"demo-egress=sandboxed/bwrap demo-failing=sandboxed/bwrap demo-finisher=sandboxed/bwrap demo-question=sandboxed/bwrap demo-spinner=trusted_local/trusted_local"
check "each sandboxed lease: its own branch, worktree and uid" test "$(for i in $ASK $FIN $FAILED $EGR; do
	field "$i" '"\(.branch) \(.worktree) \(.sandbox_id)"'; done | tr ' ' '\n' | sort -u | wc -l)" = 12
check "... all on the demo repository's main" test "$(for i in $ASK $FIN $FAILED $EGR; do
	field "$i" '"\(.base) \(.base_ref)"'; done | sort -u)" = "$BASE refs/heads/main"

# --- every state ----------------------------------------------------------------
check "spinner: working" "$CORRAL" wait "$SPIN" --until working --timeout 30
check "spinner: under a spinner" wait_screen "$SPIN" "Working…" 10
check "question: blocked on its y/n question" "$CORRAL" wait "$ASK" --until blocked --timeout 30
check "question: the question is on its screen" wait_screen "$ASK" "(y/n)" 5
check "finisher: done, result_ready" "$CORRAL" wait "$FIN" --until result_ready --timeout 60
check "finisher: a verified result" poll has_receipt "$FIN" result_materialised
check "failing: failed with its exit status" "$CORRAL" wait "$FAILED" --until failed --timeout 60
check "failing: lease failed, activity failed, reason exit 1" jq_eq "$(js "$FAILED")" \
	'"\(.lease_state) \(.activity) \(.failed_reason)"' "failed failed exit 1"
check "failing: its edit is quarantined, never materialised" poll has_receipt "$FAILED" result_quarantined
check "egress: ends" "$CORRAL" wait "$EGR" --until result_ready,failed --timeout 60
check "egress: curl was refused" wait_screen "$EGR" "curl exit" 5
# The lease's auditing proxy (the demo policy allowlists one name): the
# agent zone has HTTPS_PROXY, the denied name is in the receipt, recorded
# (on_egress_violation = record), and nothing was allowed.
check "egress: the lease has its proxy (receipt)" has_receipt "$EGR" egress_proxy
check "egress: the agent went through it and was refused" wait_screen "$EGR" "proxy refused it" 1
check "egress: the receipt records the denied attempt at example.invalid" poll bash -c \
	"\"$CORRAL\" show $EGR --json | jq -e '[.receipts[] | select(.kind == \"egress\" and
	 .fields.verdict == \"deny\" and (.fields.target | test(\"^example.invalid:\")) and
	 .fields.action == \"recorded\")] | length == 1'"
check "egress: nothing was allowed to it" jq_eq "$(js "$EGR")" \
	'[.receipts[] | select(.kind == "egress" and .fields.verdict == "allow")] | length' 0
check "egress: its lease ends with nothing changed" poll has_receipt "$EGR" result_materialised

# --- the operator: answer, review, apply, reject, cancel ------------------------------
check "question: answer y" "$CORRAL" send "$ASK" 'y\r'
check "question: then done with a patch" "$CORRAL" wait "$ASK" --until result_ready --timeout 30
check "question: its result" poll has_receipt "$ASK" result_materialised
rv=$("$CORRAL" review "$FIN" 2>&1)
has_all() { local x; for x in "${@:2}"; do grep -qF -- "$x" <<<"$1" || return 1; done; }
check "review: the finisher changed the three sources" has_all "$rv" src/lexer.c src/parser.c src/main.c
check "review: the README edit is not the finisher's" test -z "$(grep -F README.md <<<"$rv")"
check "... but the question's" has_all "$("$CORRAL" review "$ASK")" README.md
check "apply the finisher's patch (explicit)" "$CORRAL" apply "$FIN"
check "main is fast-forwarded to the reviewed commit" bash -c \
	"[ \"\$(git -C '$REPO' rev-parse main)\" = \"\$(\"$CORRAL\" show $FIN --json | jq -r .result.commit)\" ] &&
	 [ \"\$(git -C '$REPO' rev-parse main~1)\" = '$BASE' ] &&
	 git -C '$REPO' show main:src/lexer.c | grep -q 'tidied by the corral demo agent'"
for i in $ASK $FAILED $EGR; do
	check "reject $(field "$i" .name)" "$CORRAL" reject "$i"
done
SPIN_PID=$("$CORRAL" ls --json | jq -r ".[] | select(.id == \"$SPIN\") | .child_pid // empty")
check "the spinner runs on the host (its process)" test -n "$SPIN_PID" -a -d "/proc/$SPIN_PID"
check "cancel the spinner (trusted_local, --allow-control)" "$CORRAL" cancel "$SPIN"
check "the spinner ends cancelled" "$CORRAL" wait "$SPIN" --until cancelled --timeout 30
check "reconcile" "$CORRAL" reconcile

# --- nothing of the runtime is left; results and history are --------------------------
states=$("$CORRAL" ls --all --json)
check "final states: applied, rejected x2, failed (rejected: its quarantine kept), cancelled" jq_eq "$states" \
	"[.[] | select(.id == \"$SPIN\" or .id == \"$ASK\" or .id == \"$FIN\" or
	  .id == \"$FAILED\" or .id == \"$EGR\") | .lease_state] | sort | join(\" \")" \
	"applied cancelled failed rejected rejected"
check "none of them is live (corral ls)" jq_eq "$("$CORRAL" ls --json)" \
	"[.[] | select(.name | startswith(\"demo-\"))] | length" 0
for i in $ALL; do
	runtime_gone "$i" "$(field "$i" .name)"
done
check "no process of the spinner is left" test -n "$SPIN_PID" -a ! -d "/proc/$SPIN_PID"
for i in $ASK $FIN $FAILED $EGR; do
	n=$(field "$i" .name)
	check "$n: the result (patch, manifest) is kept" \
		test -d "$CORRAL_STATE_DIR/leases/$i/result" -a -n "$(ls -A "$CORRAL_STATE_DIR/leases/$i/result")"
	check "$n: its branch is kept" git -C "$REPO" show-ref -q "refs/heads/corral/$i"
done
check "review still shows the applied result" bash -c "\"$CORRAL\" review $FIN | grep -q 'src/parser.c'"
echo "# headless demo to clean state: $(( $(date +%s) - T0 ))s"

# --- the console: `corral demo` in a terminal, quit, the agents keep running ---------
cat >"$TMP/tmux.conf" <<'EOF'
set -g status off
set -g default-terminal tmux-256color
set -g default-size 120x40
EOF
t -f "$TMP/tmux.conf" new-session -d -s demo -x 120 -y 40 \
	"env CORRAL_STATE_DIR='$CORRAL_STATE_DIR' XDG_CONFIG_HOME='$XDG_CONFIG_HOME' LANG=C.UTF-8 LC_ALL=C.UTF-8 '$CORRAL' demo; sleep 1e9"
on_screen() { t capture-pane -p -t demo | grep -qF -- "$1"; }
check "corral demo opens the console on its leases" poll on_screen "demo-question"
check "... all five in the list" poll bash -c "for n in spinner question finisher failing egress; do
	tmux -L '$TS' capture-pane -p -t demo | grep -qF \"demo-\$n\" || exit 1; done"
live=$("$CORRAL" ls --json | jq -r '[.[] | select(.name | startswith("demo-"))] | length')
check "five new live leases" test "$live" = 5
Q2=$("$CORRAL" ls --json | jq -r '.[] | select(.name == "demo-question") | .id')
S2=$("$CORRAL" ls --json | jq -r '.[] | select(.name == "demo-spinner") | .id')
# The README's way to answer the question: Enter, y Enter.
check "console: the question blocks" "$CORRAL" wait "$Q2" --until blocked --timeout 30
status_has() { t capture-pane -p -t demo | tail -1 | grep -qF -- "$1"; }
check "console: it opens focused on the question" poll status_has demo-question
t send-keys -t demo Enter
check "console: Enter starts typing into it" poll status_has TYPING
# C-b Esc stops typing: seen as the status going back to NORMAL (the Esc
# decoded), before any other key follows it (Esc then a key within the
# terminal's escape delay is that key with Alt).
t send-keys -t demo C-b Escape
check "console: C-b Esc stops typing" poll status_has NORMAL
t send-keys -t demo Enter
check "console: Enter types into it again" poll status_has TYPING
t send-keys -t demo y Enter
check "console: y Enter answers it; it ends with a patch" "$CORRAL" wait "$Q2" --until result_ready --timeout 30
check "console: typing stops when the agent ends" poll status_has NORMAL
# The console by PID: the pane's shell's child (never a command line,
# another process may match it).
cpid=$(pgrep -P "$(t display -p -t demo '#{pane_pid}')" -x corral)
check "the console process runs" test -n "$cpid"
t send-keys -t demo q
check "q quits the console" poll bash -c "[ -n '$cpid' ] && ! kill -0 '$cpid' 2>/dev/null"
check "the agents keep running without it" bash -c "\"$CORRAL\" ls --json | jq -e '[.[] |
	select(.id == \"$S2\") | select(.lease_state == \"running\" and .lost == null)] | length == 1'"
# Tidy up the second demo the same way: cancel what runs, reject the rest
# once its holder has torn it down, reconcile.
for i in $("$CORRAL" ls --json | jq -r '.[] | select(.name | startswith("demo-")) | .id'); do
	"$CORRAL" cancel "$i" >/dev/null 2>&1
	"$CORRAL" wait "$i" --until result_ready,failed,cancelled --timeout 30 >/dev/null 2>&1
done
for i in $("$CORRAL" ls --all --json | jq -r '.[] | select(.cleanup != "confirmed") | .id'); do
	poll has_receipt "$i" teardown
	poll bash -c "\"$CORRAL\" reject $i || \"$CORRAL\" show $i --json | jq -e '.cleanup == \"confirmed\"'"
done
"$CORRAL" reconcile >/dev/null 2>&1
live() { jq_eq "$("$CORRAL" ls --json)" length 0; }
check "second demo: nothing live is left" poll live
live || "$CORRAL" ls --all
echo "# total: $(( $(date +%s) - T0 ))s"

finish
