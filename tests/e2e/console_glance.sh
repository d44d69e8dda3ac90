#!/usr/bin/env bash
# console_glance.sh: the console at a glance (issue 21), the real binary in
# tmux on the demo's five leases (four bwrap, one trusted_local): at 60, 80,
# 120, 200 and 300 columns every row shows its badge, activity word
# (blocked says blocked), isolation tag (HOST, in its own colour, for the
# agent on the host), name and age, and the wider ones the question, the
# branch and the lease state; below 60 columns one column, z switching to
# the pane; Tab goes to the next lease that needs the operator and the
# status bar counts them; 1 then y answers the question through `corral
# answer` (its receipt); a refuses what has no result and opens the review
# of one never seen; a message goes when the focus moves.
set -u
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/../acceptance/host.bash"
export LC_ALL=C.UTF-8

needs_root "bwrap leases"
command -v tmux >/dev/null || { echo "tmux is required (scripts/packages.txt)"; exit 1; }
TS="corral-glance-$$"
t() { tmux -L "$TS" "$@"; }
trap 't kill-server 2>/dev/null; cleanup' EXIT

out=$("$CORRAL" demo --no-console --json) || { fail "demo --no-console"; finish; exit; }
id_of() { jq -r --arg n "$1" '.leases[] | select(.name == $n) | .id' <<<"$out"; }
REPO_DIR=$(jq -r .repository <<<"$out")
ASK=$(id_of demo-question) FIN=$(id_of demo-finisher) FAILED=$(id_of demo-failing)
EGR=$(id_of demo-egress) SPIN=$(id_of demo-spinner)
check "question: blocked" "$CORRAL" wait "$ASK" --until blocked --timeout 30
check "finisher: result_ready" "$CORRAL" wait "$FIN" --until result_ready --timeout 60
check "failing: failed" "$CORRAL" wait "$FAILED" --until failed --timeout 60
check "egress: ended" "$CORRAL" wait "$EGR" --until result_ready,failed --timeout 60
check "spinner: working" "$CORRAL" wait "$SPIN" --until working --timeout 30

cat >"$TMP/tmux.conf" <<'EOF'
set -g status off
set -g default-terminal tmux-256color
set -g default-size 120x40
EOF
t -f "$TMP/tmux.conf" new-session -d -s g -x 120 -y 40 \
	"env CORRAL_STATE_DIR='$CORRAL_STATE_DIR' XDG_CONFIG_HOME='$XDG_CONFIG_HOME' LANG=C.UTF-8 LC_ALL=C.UTF-8 '$CORRAL' attach $ASK; sleep 1e9"
screen() { t capture-pane -p -t g; }
status_line() { screen | tail -1; }
status_has() { status_line | grep -qF -- "$1"; }
row() { screen | grep -F -- "$1" | head -1; }
# The list's row of a lease, in the list's columns (left of the rule).
list_row() { row "$1" | sed 's/│.*//'; }
check "the console opens on the question" poll status_has demo-question

# --- every width --------------------------------------------------------------
declare -A WORD=([demo-question]=blocked [demo-finisher]=done [demo-failing]=failed
	[demo-egress]=done [demo-spinner]=working)
row_ok() {	# row_ok NAME: badge, activity word, isolation tag, age
	local r tag=bwrap
	r=$(list_row "$1")
	[ "$1" = demo-spinner ] && tag=HOST
	[[ "$r" =~ ^[\ \>][BDFW][\ *]\ $1\ +${WORD[$1]}\ +$tag\ +[0-9]+[smhd](\ |$) ]]
}
# laid_out W: the screen is the console's layout at W columns: the rule
# right of the list (3/10 of the width, 30 to 100 columns) from 100 up, a
# rule across above the pane below that, and none below 60 (one column).
laid_out() {
	local s lw l
	s=$(screen)
	[ "$(tail -1 <<<"$s" | wc -L)" -le "$1" ] || return 1
	if [ "$1" -ge 100 ]; then
		lw=$(($1 * 3 / 10)); [ $lw -gt 100 ] && lw=100
		l=$(head -1 <<<"$s")
		[ "${l:lw:1}" = "│" ]	# characters, not bytes (C.UTF-8)
	elif [ "$1" -ge 60 ]; then
		grep -q "^─ .*─$" <<<"$s" && [ "$(grep -m1 '^─ ' <<<"$s" | wc -L)" = "$1" ]
	else
		! grep -q '[─│]' <<<"$s"
	fi
}
wait_width() { poll laid_out "$1" && poll row_ok demo-spinner; }
for w in 60 80 120 200 300; do
	t resize-window -t g -x "$w" -y 40
	check "$w columns: drawn" wait_width "$w"
	for n in demo-question demo-finisher demo-failing demo-egress demo-spinner; do
		if row_ok "$n"; then pass "$w columns: $n has its badge, ${WORD[$n]}, tag and age"
		else fail "$w columns: $n row '$(list_row "$n")'"; fi
	done
	# the agent on the host: its HOST tag in its own colour (red)
	check "$w columns: HOST stands out (its own colour)" bash -c \
		"tmux -L '$TS' capture-pane -ep -t g | grep -F demo-spinner | grep -qF $'\e[41mHOST'"
	check "$w columns: no sandboxed row reads HOST" bash -c \
		"! tmux -L '$TS' capture-pane -p -t g | grep -E 'demo-(question|finisher|failing|egress) ' | grep -q HOST"
	if [ "$w" -ge 60 ] && [ "$w" != 120 ]; then
		check "$w columns: the blocked row shows its question" bash -c \
			"tmux -L '$TS' capture-pane -p -t g | grep -F demo-question | head -1 | grep -qF '? Add a usage'"
	fi
	case $w in 80|300)
		check "$w columns: the branch" bash -c "tmux -L '$TS' capture-pane -p -t g |
			grep -F demo-finisher | head -1 | grep -qF 'corral/'" ;;
	esac
	[ "$w" = 300 ] && check "300 columns: the lease state" bash -c \
		"tmux -L '$TS' capture-pane -p -t g | grep -F demo-finisher | head -1 | grep -qF result_ready"
	check "$w columns: the status bar counts who needs you" poll status_has "4 need you (Tab)"
done

# --- what the leases cost (SPEC 8.5) -------------------------------------------
# A lease's usage as its model requests recorded it (the gateway's receipts
# add to its row; written straight into the journal's row here: the demo
# makes no model request): its row's cost, and the total in the status bar.
sqlite3 "$CORRAL_STATE_DIR/corral.db" "UPDATE leases SET usage_requests = 3,
	usage_input = 30, usage_output = 15, usage_cost_nano = 1200000000
	WHERE id = '$FIN';"
check "cost: the finisher's row shows what it cost" poll bash -c \
	"tmux -L '$TS' capture-pane -p -t g | grep -F demo-finisher | head -1 | grep -qF '\$1.20'"
check "cost: the other rows cost nothing shown" bash -c \
	"! tmux -L '$TS' capture-pane -p -t g | grep -F demo-question | head -1 | grep -qF '\$'"
check "cost: the status bar says the total" poll status_has '$1.20 spent'

# --- one column below 60 ------------------------------------------------------
t resize-window -t g -x 50 -y 30
check "50 columns: drawn" wait_width 50
check "50 columns: one column, the list alone (no pane)" bash -c \
	"! tmux -L '$TS' capture-pane -p -t g | grep -qF 'Planning a usage'"
for n in demo-question demo-spinner; do
	if row_ok "$n"; then pass "50 columns: $n row"; else fail "50 columns: $n row '$(list_row "$n")'"; fi
done
check "50 columns: still counts who needs you" poll status_has "4 need you"
t send-keys -t g z
check "50 columns: z shows the focused pane full width" poll bash -c \
	"tmux -L '$TS' capture-pane -p -t g | grep -q '^Planning a usage'"
t send-keys -t g z
check "50 columns: z again, the list" poll bash -c \
	"tmux -L '$TS' capture-pane -p -t g | grep -q '^>B  demo-question'"
t resize-window -t g -x 120 -y 40
check "120 columns again" wait_width 120

# --- Tab: what needs you ------------------------------------------------------
focused() { status_line | awk '{print $2}'; }
t send-keys -t g Tab
check "Tab: the next that needs you (the finisher's unseen result)" poll bash -c \
	"tmux -L '$TS' capture-pane -p -t g | tail -1 | grep -qF ' demo-finisher '"
check "... seen now: 3 need you" poll status_has "3 need you (Tab)"
t send-keys -t g Tab
check "Tab: the failed one" poll bash -c "tmux -L '$TS' capture-pane -p -t g | tail -1 | grep -qF ' demo-failing '"
t send-keys -t g Tab
check "Tab: the egress one" poll bash -c "tmux -L '$TS' capture-pane -p -t g | tail -1 | grep -qF ' demo-egress '"
check "... 1 needs you (the question)" poll status_has "1 needs you (Tab)"
t send-keys -t g Tab
check "Tab: back to the blocked question, skipping the spinner" poll bash -c \
	"tmux -L '$TS' capture-pane -p -t g | tail -1 | grep -qF ' demo-question '"
t send-keys -t g Tab
check "Tab: nothing else needs you (said so)" poll status_has "no other lease needs you"
t send-keys -t g j
check "a message goes when the focus moves" poll bash -c \
	"tmux -L '$TS' capture-pane -p -t g | tail -1 | grep -qF ' demo-finisher j/k move'"
t send-keys -t g k
check "back on the question" poll bash -c "tmux -L '$TS' capture-pane -p -t g | tail -1 | grep -qF ' demo-question '"

# --- a: preconditions first ----------------------------------------------------
t send-keys -t g G
check "G: the spinner" poll bash -c "tmux -L '$TS' capture-pane -p -t g | tail -1 | grep -qF ' demo-spinner '"
t send-keys -t g a
check "a on the trusted_local one: no result, no question asked" poll status_has \
	"demo-spinner is trusted_local: it has no result to apply"
check "... still NORMAL" status_has NORMAL
t send-keys -t g k k
check "the failed one" poll bash -c "tmux -L '$TS' capture-pane -p -t g | tail -1 | grep -qF ' demo-failing '"
t send-keys -t g a
check "a on a failed lease: it says so, asks nothing" poll status_has "demo-failing failed (exit 1): no result to apply"
t send-keys -t g k
t send-keys -t g a
check "a on a result not reviewed: the review opens instead of a question" poll status_has REVIEW
check "... which says so" poll status_has "a applies what it shows"
check "... and asks nothing yet" bash -c "! tmux -L '$TS' capture-pane -p -t g | tail -1 | grep -q 'y/n'"
t send-keys -t g q
check "q closes the review" poll status_has NORMAL
t send-keys -t g j j
check "the egress one" poll bash -c "tmux -L '$TS' capture-pane -p -t g | tail -1 | grep -qF ' demo-egress '"
t send-keys -t g a
check "a on an empty result: nothing to apply, nothing asked" poll status_has \
	"demo-egress changed nothing: nothing to apply (r rejects it)"

# --- the egress refusal and the empty result, in text -------------------------------
rv=$("$CORRAL" review "$EGR")
check "review: the proxy's decisions, counted, the denied target named" \
	grep -qx 'egress    0 allowed, 1 denied (example.invalid:443)' <<<"$rv"
check "review: an empty patch says what it means" \
	grep -qx 'empty     the agent changed nothing in the repository: nothing to apply' <<<"$rv"
check "review: apply is not suggested for it, reject is" bash -c \
	"! grep -q 'corral apply' <<<'$rv' && grep -q '^next      corral reject $EGR (nothing to apply' <<<'$rv'"
check "show: the same egress line under the receipt" bash -c \
	"\"$CORRAL\" show $EGR | grep -A1 '^receipt ' | grep -qx 'egress           0 allowed, 1 denied (example.invalid:443)'"
rv=$("$CORRAL" review "$FIN")
check "review of a real patch: apply suggested, nothing denied" bash -c \
	"grep -q '^next      corral apply $FIN' <<<'$rv' && grep -qx 'egress    0 allowed, 0 denied' <<<'$rv'"

# --- answer with a key ----------------------------------------------------------
t send-keys -t g g
check "the question again" poll bash -c "tmux -L '$TS' capture-pane -p -t g | tail -1 | grep -qF ' demo-question '"
screen | grep -q '^key 1' || t send-keys -t g d
check "the detail panel lists its options, with their keys" poll bash -c \
	"tmux -L '$TS' capture-pane -p -t g | grep -q '^key 1 *y yes' &&
	 tmux -L '$TS' capture-pane -p -t g | grep -q '^key 2 *n no'"
t send-keys -t g 3
check "3: it has two options (said so)" poll status_has "demo-question has 2 options: keys 1-2"
t send-keys -t g 1
check "1: asks before answering" poll status_has "answer demo-question: y yes? y/n"
digest=$(js "$ASK" | jq -r .question.digest)
t send-keys -t g y
check "y: the answer goes through corral answer" poll status_has "answered 1 to"
check "... its receipt names the question's digest" poll bash -c \
	"\"$CORRAL\" show $ASK --json | jq -e --arg d '$digest' '[.receipts[] | select(.kind == \"answer\" and
	 (.fields.detail | contains(\"answered y (yes)\") and contains(\$d)))] | length == 1'"
check "the question lease goes on to its result" "$CORRAL" wait "$ASK" --until result_ready --timeout 30
check "its dead pane says how it ended" poll bash -c \
	"tmux -L '$TS' capture-pane -p -t g | sed -n 39p | grep -qE 'ended: (exit 0|result_ready) *$'"
t send-keys -t g j j
check "the failed one's pane: ended, failed, exit 1" poll bash -c \
	"tmux -L '$TS' capture-pane -p -t g | tail -1 | grep -qF ' demo-failing ' &&
	 tmux -L '$TS' capture-pane -p -t g | sed -n 39p | grep -qE 'ended: failed exit 1 *$'"

# --- failed attempts leave no row; names stay unique ------------------------------
mkdir -p "$TMP/norepo"
printf '[netwrk]\nallow = x\n' >"$TMP/typo.ini"
(cd "$TMP/norepo" && "$CORRAL" new --name nope-repo -- true) >/dev/null 2>&1
check "new outside a repository fails" test $? = 1
(cd "$REPO_DIR" && "$CORRAL" new --name nope-policy --policy "$TMP/typo.ini" -- true) >/dev/null 2>&1
check "new with a bad policy fails" test $? = 1
lsa=$("$CORRAL" ls --all)
check "ls --all lists neither" bash -c "! grep -q nope <<<'$lsa'"
check "... and says how to see them" grep -qx '(and 2 failed attempts that created nothing: corral ls --all --failed)' <<<"$lsa"
lsf=$("$CORRAL" ls --all --failed)
check "ls --all --failed lists both, failed (not starting)" bash -c \
	"grep -E ' nope-repo +failed +failed ' <<<'$lsf' && grep -E ' nope-policy +failed +failed ' <<<'$lsf'"
check "ls --all --json marks them created_nothing" jq_eq "$("$CORRAL" ls --all --json)" \
	'[.[] | select(.created_nothing) | .name] | sort | join(" ")' "nope-policy nope-repo"
check "ls --failed alone is a usage error" expect_rc 2 "ls --failed" "$CORRAL" ls --failed
# (one seen while it provisioned goes at the console's next journal read)
no_nope() { ! screen | grep -q nope; }
check "the console does not list them" poll no_nope

out2=$("$CORRAL" demo --no-console --json 2>"$TMP/demo2.err")
check "a second demo starts" test -n "$out2"
check "... its names are unique among live leases (a free one is reused)" jq_eq "$out2" \
	'[.leases[].name] | join(" ")' \
	"demo-question-2 demo-finisher-2 demo-failing demo-egress-2 demo-spinner-2"
F2=$(jq -r '.leases[] | select(.name == "demo-failing") | .id' <<<"$out2")
check "the second failing one fails" "$CORRAL" wait "$F2" --until failed --timeout 60
"$CORRAL" review demo-failing >/dev/null 2>"$TMP/amb.err"
check "a name two ended leases share: refused" test $? = 1
check "... listing their IDs and states" bash -c \
	"grep -qF \"2 leases are named 'demo-failing'; use one of their IDs:\" '$TMP/amb.err' &&
	 grep -qx '  $FAILED  failed exit 1' '$TMP/amb.err' && grep -qx '  $F2  failed exit 1' '$TMP/amb.err'"
check "a name one live lease has: that one" bash -c \
	"\"$CORRAL\" show demo-finisher-2 --json | jq -e '.name == \"demo-finisher-2\"'"

finish
