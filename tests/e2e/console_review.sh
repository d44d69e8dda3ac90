#!/usr/bin/env bash
# console_review.sh: the console's review view, timeline and keymap through
# the real binary inside tmux (issue 8 item 4, issue 9 items 3-5, SPEC 4,
# 7.4-7.6): a sandboxed lease's result reviewed in the console (files,
# hunks, checks, receipt), one hunk dropped, applied after a confirmation
# as a new verified commit, checked from the host with git; a target that
# is checked out refused with the merge hint on the status line; the
# timeline shows a row per lease; a diff line with a payload at column
# 5,000 is reachable sideways in the view that offers apply (issue 15);
# a keymap rebinding a key works and a
# malformed one is named (file:line) with the defaults kept; a malformed
# theme is named and the default used.
set -u
. "$(dirname "$0")/lib.bash"
export LC_ALL=C.UTF-8
needs_root "bwrap leases"
command -v tmux >/dev/null || { echo "tmux is required (scripts/packages.txt)"; exit 1; }

TS="corral-e2e-rv-$$"
W=160 H=40
t() { tmux -L "$TS" "$@"; }
trap 't kill-server 2>/dev/null; cleanup' EXIT

REPO=$TMP/app
new_repo "$REPO"
printf 'hello\n' >"$REPO/README"
seq 1 40 >"$REPO/nums.txt"
git -C "$REPO" add -A && git -C "$REPO" commit -qm base
git -C "$REPO" branch topic	# a branch nobody has checked out
mkdir -p "$XDG_CONFIG_HOME/corral"
cat >"$XDG_CONFIG_HOME/corral/policy.ini" <<'EOF'
[limits]
wall_time = 120s
memory = 512M
EOF

cat >"$TMP/tmux.conf" <<'EOF'
set -g status off
set -g remain-on-exit on
set -g default-terminal tmux-256color
set -g default-size 160x40
EOF
cat >"$TMP/run-console" <<EOF
rm -f '$TMP/rc'
env CORRAL_STATE_DIR='$CORRAL_STATE_DIR' XDG_CONFIG_HOME='$XDG_CONFIG_HOME' LANG=C.UTF-8 LC_ALL=C.UTF-8 '$CORRAL' "\$@" 2>'$TMP/console.err'
echo \$? >'$TMP/rc'
EOF
screen() { t capture-pane -p -t e2e:con; }
status_line() { t capture-pane -p -t e2e:con | tail -1; }
wait_pane() {	# wait_pane TEXT [SECONDS]
	local i
	for i in $(seq $((${2:-10} * 20))); do
		screen | grep -qF -- "$1" && return 0
		sleep 0.05
	done
	return 1
}
wait_status() {	# wait_status TEXT [SECONDS]
	local i
	for i in $(seq $((${2:-10} * 20))); do
		status_line | grep -qF -- "$1" && return 0
		sleep 0.05
	done
	return 1
}
wait_gone() {	# wait_gone TEXT [SECONDS]: no screen line shows TEXT
	local i
	for i in $(seq $((${2:-10} * 20))); do
		screen | grep -qF -- "$1" || return 0
		sleep 0.05
	done
	return 1
}
keys() { t send-keys -t e2e:con "$@"; }
console() {	# console ARGS...: (re)start the console in window con
	t kill-window -t e2e:con 2>/dev/null
	t new-window -d -t e2e -n con "sh $TMP/run-console $*"
	wait_pane "NORMAL" 10
}
js() { "$CORRAL" show "$1" --json; }
settled() {	# the agent ended and its result is recorded
	local i
	"$CORRAL" wait "$1" --until done,failed,cancelled --timeout 150 >/dev/null 2>&1
	for i in $(seq 600); do
		js "$1" | jq -e '.result.status != null and ([.resources[] |
		    select((.kind=="holder" or .kind=="cgroup" or
		    .kind=="sandbox") and .state!="removed")] | length == 0)' \
		    >/dev/null && return 0
		sleep 0.25
	done
	return 1
}
# An agent changing README (one hunk) and nums.txt (two far-apart hunks).
EDIT='sed -i "2s/.*/two/;38s/.*/thirtyeight/" nums.txt; echo extra >>README'
id=$(cd "$REPO" && "$CORRAL" new --base topic --name rv -- /bin/sh -c "$EDIT")
check "a sandboxed lease starts" valid_id "$id"
id2=$(cd "$REPO" && "$CORRAL" new --name onmain -- /bin/sh -c "$EDIT")
check "a second lease starts (base main, checked out)" valid_id "$id2"
# A result with one line of 5,006 bytes: PAYLOAD after 4,999 dots.
LONG='printf "%04999d" 0 | tr 0 . >long.txt; echo PAYLOAD >>long.txt'
idl=$(cd "$REPO" && "$CORRAL" new --name longline -- /bin/sh -c "$LONG")
check "a lease with a long line starts" valid_id "$idl"
settled "$id" || fail "the first lease never settled"
settled "$id2" || fail "the second lease never settled"
check "both results are ready" test "$(js "$id" | jq -r .lease_state) $(js "$id2" | jq -r .lease_state)" = "result_ready result_ready"

t -f "$TMP/tmux.conf" new-session -d -s e2e -n hold -x $W -y $H "sleep 600"

# --- the review view ------------------------------------------------------------
console attach "$id"
keys R
check "R opens the review of the focused lease" wait_pane "review $id: 3 of 3 hunk(s) kept" 20
check "the review shows the file list from the manifest" wait_pane "files (manifest):"
check "the review shows the receipt, verified" wait_pane "verified"
check "the diff shows a hunk with its ID bound to the digest" \
	bash -c "tmux -L '$TS' capture-pane -p -t e2e:con | grep -qE '@@ .* \[[0-9a-f]{8}:2:1\]'"
check "the status line names the review keys" wait_status "Space drop/keep"
# files in patch order: README (1), nums.txt (2); ] moves to a file header
keys ']' ']' n
keys Space
check "Space drops the hunk under the cursor" wait_pane "2 of 3 hunk(s) kept"
check "the dropped hunk is marked" \
	bash -c "tmux -L '$TS' capture-pane -p -t e2e:con | grep -qE '^x @@ -1,'"
keys a
check "a asks before it applies, naming the new commit" wait_status "a new commit of 2 of 3 hunk(s)"
keys n
check "n declines: nothing applied" wait_status "not done"
check "declining keeps the review open" wait_pane "2 of 3 hunk(s) kept"
keys a
wait_status "y/n" 5
keys y
check "y applies: the outcome is on the status line" wait_status "applied $id" 60
check "the lease is applied" test "$(js "$id" | jq -r .lease_state)" = applied
check "topic now carries the kept hunks (line 38, README)" \
	bash -c "git -C '$REPO' show topic:nums.txt | sed -n 38p | grep -qx thirtyeight &&
	    git -C '$REPO' show topic:README | grep -qx extra"
check "the dropped hunk is not applied (line 2 unchanged)" \
	test "$(git -C "$REPO" show topic:nums.txt | sed -n 2p)" = 2
check "main and the operator's checkout are untouched" \
	bash -c "test \"\$(git -C '$REPO' rev-parse main)\" = \"\$(git -C '$REPO' rev-parse topic~1)\" &&
	    git -C '$REPO' diff --quiet && test \"\$(sed -n 2p '$REPO/nums.txt')\" = 2"
check "the applied commit is the hunks commit (via hunks)" \
	test "$(js "$id" | jq -r .result.via)" = hunks
check "the review view follows the new state" wait_pane "lease $id (rv)  applied" 20
keys q
check "q closes the review" wait_gone "review $id:"
check "the outcome stays on the status line" wait_status "applied $id"

# --- a checked-out target: refused, with the merge hint --------------------------
keys q
console attach "$id2"
keys R
wait_pane "review $id2: 3 of 3 hunk(s) kept" 20 || fail "no review of the second lease"
keys a
wait_status "y/n" 5
keys y
check "apply into a checked-out branch is refused on the status line" \
	wait_status "checked out; run there: cd $REPO" 60
check "the refusal names the merge to run there" \
	wait_status "git merge --ff-only corral/$id2"
check "the focus stayed on the lease" wait_pane "review $id2"
check "main did not move" test "$(git -C "$REPO" rev-parse main)" = "$(git -C "$REPO" rev-parse topic~1)"
# reject it from the review, after a question (SPEC 7.5)
wt=$(js "$id2" | jq -r .worktree)
keys r
check "r asks before it rejects" wait_status "reject onmain"
keys y
check "y rejects: the outcome is on the status line" wait_status "rejected $id2" 60
check "the lease is rejected" test "$(js "$id2" | jq -r .lease_state)" = rejected
check "its review worktree is gone, its branch kept" \
	bash -c "! test -e '$wt' && git -C '$REPO' rev-parse --verify -q corral/$id2 >/dev/null"
keys q
wait_gone "review $id2:" || fail "q did not close the review"

# --- the timeline ----------------------------------------------------------------
# a lease that waits on the operator for two seconds (its own report)
ask=$("$CORRAL" new --sandbox trusted_local --allow-control --name asker -- /bin/sh -c \
	'printf "\033]7717;corral-report;blocked\a"; printf "Proceed? [y/N] "; read x; echo ok')
"$CORRAL" wait "$ask" --until blocked --timeout 20 >/dev/null || fail "asker never blocked"
sleep 2	# the time it spends blocked is what the timeline must show
"$CORRAL" send "$ask" 'y\r'
"$CORRAL" wait "$ask" --until done --timeout 20 >/dev/null || fail "asker never finished"
keys t
check "t opens the timeline" wait_pane "timeline " 10
rows() {	# rows REGEX N: N timeline rows match (the log loads in the background)
	local i
	for i in $(seq 200); do
		[ "$(screen | grep -cE -- "$1")" = "$2" ] && return 0
		sleep 0.05
	done
	return 1
}
check "the timeline has a row per lease" rows '^[ >] (rv|onmain|asker) ' 3
check "a lease that waited on the operator shows B and its blocked time" \
	bash -c "tmux -L '$TS' capture-pane -p -t e2e:con | grep -E '^[ >] asker ' | grep -qE 'B.* blocked ([2-9]|[1-9][0-9]+)s'"
check "a row shows its bar and blocked time" \
	bash -c "tmux -L '$TS' capture-pane -p -t e2e:con | grep -E '^[ >] onmain ' | grep -qE '[SWPD].*blocked 0s'"
keys q
check "q closes the timeline" wait_gone "timeline "
keys q

# --- a long diff line: every byte reachable before apply -------------------------
settled "$idl" || fail "the long-line lease never settled"
keys q
console attach "$idl"
keys R
check "the review of the long line opens" wait_pane "review $idl: 1 of 1 hunk(s) kept" 20
check "the title says the view scrolls sideways" wait_pane "[col 1 of 5007, left/right]"
check "the payload is past the right edge at first" bash -c "! tmux -L '$TS' capture-pane -p -t e2e:con | grep -q PAYLOAD"
check "the cut line ends with a more marker" \
	bash -c "tmux -L '$TS' capture-pane -p -t e2e:con | grep -qE '^  \+\.{100,}…\$'"
keys $(printf 'Right %.0s' $(seq 124))
check "Right scrolls to the payload at column 5,000" wait_pane "PAYLOAD" 10
check "text left out to the left is marked" \
	bash -c "tmux -L '$TS' capture-pane -p -t e2e:con | grep -qE '^  …\.+PAYLOAD'"
check "the title follows" wait_pane "[col 4961 of 5007, left/right]"
keys 0
check "0 scrolls back to the first column" wait_pane "[col 1 of 5007, left/right]"
check "apply is still offered" wait_status "a apply"
keys q
wait_gone "review $idl:" || fail "q did not close the review"

# --- the keymap ------------------------------------------------------------------
printf '# my keys\nbind T timeline\nunbind t\nbind -T review J hunk-next\n' >"$XDG_CONFIG_HOME/corral/keys"
console attach "$id2"
keys t '?'
# ? (help, in either view) is the marker: once its help shows, t has been
# handled, and the mode on the status line is still NORMAL.
unbound_did_nothing() { wait_pane "this help" && status_line | grep -q ' NORMAL '; }
check "an unbound default does nothing" unbound_did_nothing
keys '?'
no_timeline() { wait_gone "this help" && ! screen | grep -q 'timeline '; }
check "... and once the help is closed, no timeline is drawn" no_timeline
keys T
check "a rebound key opens the timeline" wait_pane "timeline " 10
keys q q
printf 'bind T timeline\nbind Q no-such-command\n' >"$XDG_CONFIG_HOME/corral/keys"
console attach "$id2"
check "a malformed keymap is named with its file and line" \
	wait_status "keys:2: unknown command 'no-such-command'"
keys t
check "the defaults are kept (t opens the timeline)" wait_pane "timeline " 10
keys q q
rm -f "$XDG_CONFIG_HOME/corral/keys"

# --- themes -----------------------------------------------------------------------
printf 'list = green\nlist.selected = purple on black\n' >"$TMP/bad.theme"
console --theme "$TMP/bad.theme"
check "a malformed theme is named with its file and line" wait_status "bad.theme:2:"
keys q
console --theme light
check "--theme light opens the console" wait_pane "NORMAL"
keys q
# Colour depth (SPEC 4.6): the same RGB theme colour as 24-bit, the
# nearest of 256, the 8 basic colours, or none with NO_COLOR.
printf 'list.selected = #ff8000 on #000080\n' >"$TMP/rgb.theme"
has() { grep -qE -- "$1" <<<"$out"; }
lacks() { ! grep -qE -- "$1" <<<"$out"; }
both() { "$1" "$2" && "$3" "$4"; }
depth() {	# depth TERM [NO_COLOR [ARGS]]: the console's cells with their SGR
	t kill-window -t e2e:con 2>/dev/null
	t new-window -d -t e2e -n con "env TERM=$1 NO_COLOR=${2-} sh $TMP/run-console ${3---theme $TMP/rgb.theme}"
	wait_pane "NORMAL" 10 >/dev/null
	wait_pane "asker" 10 >/dev/null
	t capture-pane -p -e -t e2e:con
	keys q
}
infocmp xterm-direct >/dev/null 2>&1 || fail "no xterm-direct terminfo (ncurses-term, scripts/packages.txt)"
out=$(depth xterm-direct)
check "truecolor: the RGB colour as it is" has '38;2;255;128;0'
out=$(depth xterm-256color)
check "256 colours: the nearest index (208)" both has '38;5;208' lacks '38;2;'
out=$(depth xterm-16color)
check "16 colours: basic and bright colours only" both has '\[([0-9;]*;)?(3[0-7]|9[0-7])(;[0-9;]*)?m' lacks '[34]8;[25];'
out=$(depth xterm)
check "8 colours: basic colours only" both has '\[([0-9;]*;)?3[0-7](;[0-9;]*)?m' lacks '[34]8;[25];|\[([0-9;]*;)?(9[0-7]|10[0-7])(;[0-9;]*)?m'
out=$(depth xterm-256color 1)
check "NO_COLOR: no colour at all, the selection in reverse" \
	both lacks '\[([0-9;]*;)?(3[0-7]|4[0-7]|38;|48;)' has '\[([0-9;]*;)?7(;[0-9;]*)?m'
printf '[console]\ntheme = %s\n' "$TMP/rgb.theme" >"$XDG_CONFIG_HOME/corral/config"
out=$(depth xterm-direct "" " ")
check "the config's [console] theme is used" has '38;2;255;128;0'
rm -f "$XDG_CONFIG_HOME/corral/config"
check "--theme nosuch is refused with its name" \
	bash -c "'$CORRAL' --theme no-such-theme </dev/null 2>&1 | grep -q 'no-such-theme'"
expect_rc 2 "--theme without a name is a usage error" "$CORRAL" --theme
expect_rc 2 "--theme= with an empty name is a usage error" "$CORRAL" --theme=
expect_rc 2 "attach takes one ID" "$CORRAL" attach "$id" "$id2"

finish
