#!/usr/bin/env bash
# attach_fidelity.sh: the console shows what the model holds (issue 22).
# Each recording of tests/fixtures/tmuxdiff (real programs, and the real
# Claude Code and Codex) is written by a lease's program into a terminal of
# the size it was recorded at (80x24, 200x50); `corral attach` in a tmux
# pane (a 256-colour terminal) resizes it to its pane, which rewraps it, and the pane's cells are compared with the model's of
# the same moment (corral screen --json) by pane_vs_model.py: text and
# attributes exactly, colours as a 256-colour terminal can show them.
# The model itself is compared with tmux by pty/tmuxdiff. Then the
# scrollback browsed before and after a resize: the lines shown are the
# holder's rewrapped ones.
set -u
. "$(dirname "$0")/lib.bash"
export LC_ALL=C.UTF-8
command -v tmux >/dev/null || { echo "tmux is required (scripts/packages.txt)"; exit 1; }
command -v python3 >/dev/null || { echo "python3 is required"; exit 1; }

FIX="$CORRAL_SRC/tests/fixtures/tmuxdiff"
TS="corral-e2e-$$"
PANE_X=37 PANE_ROWS=39 PANE_COLS=83	# the layout at 120x40: list 36, rule, pane
t() { tmux -L "$TS" "$@"; }
trap 't kill-server 2>/dev/null; cleanup' EXIT

cat >"$TMP/tmux.conf" <<'EOF'
set -g status off
set -g default-terminal tmux-256color
set -g default-size 120x40
EOF
t -f "$TMP/tmux.conf" new-session -d -s e2e -n hold -x 120 -y 40 "sleep 600"

# model_size ID: "ROWS COLS" of the model
model_size() { "$CORRAL" screen "$1" --json | jq -r '"\(.rows) \(.cols)"'; }
# size_is ID "ROWS COLS": the model is that size
size_is() { [ "$(model_size "$1")" = "$2" ]; }
# settled ID: the model and the console's window each the same twice,
# 0.3 s apart (the console draws at most every few ms)
settled() {
	local a b c d i
	for i in $(seq 60); do
		a=$("$CORRAL" screen "$1" --json) c=$(t capture-pane -e -p -t e2e:con)
		sleep 0.3
		b=$("$CORRAL" screen "$1" --json) d=$(t capture-pane -e -p -t e2e:con)
		[ "$a" = "$b" ] && [ "$c" = "$d" ] && return 0
	done
	return 1
}

# new_at ROWS COLS ARG...: corral new ARG... with its stdin a terminal of
# ROWS x COLS, which is the size a lease starts at; prints the ID
new_at() {
	python3 -c '
import fcntl, os, pty, struct, subprocess, sys, termios
m, s = pty.openpty()
fcntl.ioctl(s, termios.TIOCSWINSZ, struct.pack("HHHH", int(sys.argv[1]), int(sys.argv[2]), 0, 0))
sys.exit(subprocess.run(sys.argv[3:], stdin=s).returncode)' "$@"
}

# pane_is_model ID WHAT: the console's pane (window con) shows the model's
# cells of the same moment (left in $TMP/model.json and pane.txt)
pane_is_model() {
	"$CORRAL" screen "$1" --json >"$TMP/model.json"
	t capture-pane -e -p -t e2e:con >"$TMP/pane.txt"
	if python3 "$CORRAL_SRC/tests/e2e/pane_vs_model.py" "$TMP/pane.txt" \
		"$PANE_X" 0 "$TMP/model.json" >"$TMP/diff.txt" 2>&1; then
		pass "$2"
	else
		fail "$2"
		cat "$TMP/diff.txt"
	fi
}

n=0 wide=0
while read -r name rows cols; do
	case $name in '#'*|'') continue ;; esac
	n=$((n + 1))
	[ "$rows $cols" = "24 80" ] || wide=$((wide + 1))
	done_file="$TMP/$name.done"
	id=$(new_at "$rows" "$cols" "$CORRAL" new --sandbox trusted_local --allow-control \
		--name "$name" -- sh -c "cat '$FIX/$name.bytes'; touch '$done_file'; exec sleep 600")
	valid_id "$id" || { fail "$name: corral new"; continue; }
	poll test -e "$done_file" || { fail "$name: the program never wrote it"; continue; }
	check "$name: it was written at its own size, ${rows}x$cols" size_is "$id" "$rows $cols"
	t new-window -d -t e2e -n con "env CORRAL_STATE_DIR='$CORRAL_STATE_DIR' LANG=C.UTF-8 '$CORRAL' attach $id"
	check "$name: attach resizes it to the pane" \
		poll size_is "$id" "$PANE_ROWS $PANE_COLS"
	settled "$id" || fail "$name: the screen never settled"
	pane_is_model "$id" "$name: the console's pane shows the model's cells"
	t kill-window -t e2e:con
	"$CORRAL" cancel "$id" >/dev/null 2>&1
done <"$FIX/INDEX"
check "every recording was shown" test "$n" -ge 32
check "... three of them not 80x24" test "$wide" -ge 3

# --- combining marks past curses' limit -----------------------------------------
# The model keeps up to 21 bytes of a cell (ten 2-byte marks, as tmux); a
# cchar_t holds a base and four, so the console writes such a cell again
# whole after curses' update. Cells of five to eight marks, narrow, wide,
# coloured and in the pane's last column, drawn once the lease's terminal
# is the pane's size; every mark must reach the pane.
done_file="$TMP/marks.done"
m='\314\201\314\202\314\203\314\204\314\206'
id=$("$CORRAL" new --sandbox trusted_local --allow-control --name marks -- sh -c "
	while [ \"\$(stty size)\" != '$PANE_ROWS $PANE_COLS' ]; do sleep 0.1; done
	printf '\033[2J\033[Hmarks: a$m\314\207\314\210\314\212 end\r\n'
	printf 'wide: \346\227\245$m b$m\314\207 \033[1;31mred$m\033[m\r\n'
	printf '\033[3;${PANE_COLS}Hz$m\314\207\033[5;1Hfour: o\314\201\314\202\314\203\314\204 ok'
	touch '$done_file'; exec sleep 600" </dev/null)
t new-window -d -t e2e -n con "env CORRAL_STATE_DIR='$CORRAL_STATE_DIR' LANG=C.UTF-8 '$CORRAL' attach $id"
poll test -e "$done_file" || fail "marks: the program never drew them"
settled "$id" || fail "marks: the screen never settled"
pane_is_model "$id" "marks: the console's pane shows every mark of every cell"
check "marks: the model keeps eight marks on a letter" \
	test "$(jq -r '.lines[0].text' "$TMP/model.json")" = \
	"$(printf "marks: a$m\314\207\314\210\314\212 end")"
t kill-window -t e2e:con
"$CORRAL" cancel "$id" >/dev/null 2>&1

# --- the scrollback after a resize ------------------------------------------------
# Long lines, wrapped at the pane's 83 columns, go to the scrollback and
# are browsed; the window narrows, the holder rewraps them at 69 columns,
# and browsing again shows those lines, not the ones seen before.
id=$("$CORRAL" new --sandbox trusted_local --allow-control --name scroller -- \
	"$CORRAL_FIXTURES/fake_agent" </dev/null)
wait_screen "$id" ready || fail "the fake agent never started"
t new-window -d -t e2e -n con "env CORRAL_STATE_DIR='$CORRAL_STATE_DIR' LANG=C.UTF-8 '$CORRAL' attach $id"
poll size_is "$id" "$PANE_ROWS $PANE_COLS" || fail "attach never resized it"
long=$(printf 'w%02d-abcdefghij ' $(seq 9))
for k in 1 2 3 4 5 6; do
	"$CORRAL" send "$id" "echo $k-$long\r" >/dev/null
	wait_screen "$id" "got: $k-w01" || fail "echo $k never reached the screen"
done
"$CORRAL" send "$id" 'spam 60\r' >/dev/null
wait_screen "$id" "line 59" || fail "spam never reached the screen"
# pane_rows X ROWS: the pane's rows as text (a scroll tag dropped)
pane_rows() {
	t capture-pane -p -t e2e:con -S 0 -E $(($2 - 1)) | while IFS= read -r l; do
		printf '%s\n' "${l:$1}" | sed -E 's/ *\[[0-9]+\/[0-9]+\] *$//; s/ +$//'
	done
}
wait_pane_rows() {	# wait_pane_rows X ROWS TEXT
	local i
	for i in $(seq 100); do
		pane_rows "$1" "$2" | grep -qF -- "$3" && return 0
		sleep 0.1
	done
	return 1
}
t send-keys -t e2e:con '[' g
check "the scrollback shows the wrapped lines" wait_pane_rows "$PANE_X" "$PANE_ROWS" "got: 1-w01"
t send-keys -t e2e:con q
t resize-window -t e2e:con -x 100 -y 30
check "narrowed, the agent is resized to the pane" poll size_is "$id" "29 69"
t send-keys -t e2e:con '[' g
check "the scrollback is shown again" wait_pane_rows 31 29 "got: 1-w01"
settled "$id" || fail "the screen never settled"
"$CORRAL" screen "$id" --scrollback | sed -E 's/ +$//' >"$TMP/model-rows"
pane_rows 31 29 | grep -v '^$' >"$TMP/pane-rows"
check "... every row of it a row of the rewrapped scrollback" \
	bash -c "! grep -vxF -f '$TMP/model-rows' '$TMP/pane-rows'"
# (a 135-column line in three rows at 69 columns, its last "hij"; two
# rows at 83)
check "... the long lines' rows among them, cut at 69 columns" \
	grep -qx "hij" "$TMP/pane-rows"
t kill-window -t e2e:con
"$CORRAL" cancel "$id" >/dev/null 2>&1

finish
