#!/usr/bin/env bash
# console.sh: the console through the real binary inside tmux (issue 3,
# SPEC 4.2-4.5, 4.7): background endpoints that ring the bell, set their
# title and the clipboard (OSC 52) and move their cursor change nothing of
# the focused pane, the cursor, the outer title, the bell or tmux's
# buffers; typing reaches the agent (arrows, Alt, C-b C-b) only after an
# explicit key; SIGKILL of the console leaves every agent running and a new
# console shows each screen exactly as before; resize, scrollback, the
# mouse wheel, lost holders, attach and quit.
set -u
. "$(dirname "$0")/lib.bash"
export LC_ALL=C.UTF-8
command -v tmux >/dev/null || { echo "tmux is required (scripts/packages.txt)"; exit 1; }

AGENT="$CORRAL_FIXTURES/fake_agent"
TS="corral-e2e-$$"
W=120 H=40
PANE_X=37	# the layout at 120 columns: list 36, rule, then the pane
t() { tmux -L "$TS" "$@"; }
trap 't kill-server 2>/dev/null; cleanup' EXIT

cat >"$TMP/tmux.conf" <<'EOF'
set -g status off
set -g remain-on-exit on
set -g default-terminal tmux-256color
# on: an OSC 52 reaching tmux would create a buffer we can see
set -g set-clipboard on
set -g monitor-bell on
set -g default-size 120x40
EOF
# The console runs under sh, which records its exit status (tmux 3.3 does
# not always report a dead pane's status).
cat >"$TMP/run-console" <<EOF
rm -f '$TMP/rc'
env CORRAL_STATE_DIR='$CORRAL_STATE_DIR' LANG=C.UTF-8 LC_ALL=C.UTF-8 '$CORRAL' "\$@"
echo \$? >'$TMP/rc'
EOF
CONSOLE="sh $TMP/run-console"

screen() { t capture-pane -p -t e2e:con; }
# The focused pane: every row but the status line, right of the list.
pane_area() {
	local l
	t capture-pane -p -t e2e:con -S 0 -E $((H - 2)) | while IFS= read -r l; do
		printf '%s\n' "${l:PANE_X}"
	done
}
status_line() { t capture-pane -p -t e2e:con | tail -1; }
fmt() { t display -p -t e2e:con "$1"; }
wait_pane() {	# wait_pane TEXT [SECONDS]
	local i
	for i in $(seq $((${2:-10} * 20))); do
		screen | grep -qF -- "$1" && return 0
		sleep 0.05
	done
	return 1
}
wait_match() {	# wait_match REGEX [SECONDS]: a screen line matches
	local i
	for i in $(seq $((${2:-10} * 20))); do
		screen | grep -qE -- "$1" && return 0
		sleep 0.05
	done
	return 1
}
lease_field() {	# lease_field ID FIELD: from ls --all --json
	"$CORRAL" ls --all --json | jq -r ".[] | select(.id==\"$1\") | .$2"
}
wait_field() {	# wait_field ID FIELD VALUE
	local i
	for i in $(seq 100); do
		[ "$(lease_field "$1" "$2")" = "$3" ] && return 0
		sleep 0.1
	done
	return 1
}
wait_rc() {	# wait_rc N: the console exited with status N
	local i
	for i in $(seq 100); do
		[ -s "$TMP/rc" ] && break
		sleep 0.05
	done
	test "$(cat "$TMP/rc" 2>/dev/null)" = "$1"
}
console_pid() { pgrep -P "$(fmt '#{pane_pid}')" -x corral; }
wait_status() {	# wait_status TEXT: the status line shows TEXT
	local i
	for i in $(seq 200); do
		status_line | grep -qF -- "$1" && return 0
		sleep 0.05
	done
	return 1
}
wait_pane_gone() {
	local i
	for i in $(seq $((${2:-10} * 20))); do
		screen | grep -qF -- "$1" || return 0
		sleep 0.05
	done
	return 1
}
# The pane area once it stops changing (and is not a placeholder).
settled_pane() {
	local a b i
	a=$(pane_area)
	for i in $(seq 100); do
		sleep 0.1
		b=$(pane_area)
		if [ "$a" = "$b" ] && ! grep -q "connecting to" <<<"$b"; then
			printf '%s\n' "$b"
			return 0
		fi
		a=$b
	done
	printf '%s\n' "$b"
	return 1
}
hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }
holder_pid() { "$CORRAL" ls --json | jq -r ".[] | select(.id==\"$1\") | .holder_pid"; }
agent_sees() {	# agent_sees ID TEXT: the fake agent printed TEXT
	wait_screen "$1" "$2" 5
}

# --- positive controls: this tmux would show a leak ------------------------------
t -f "$TMP/tmux.conf" new-session -d -s e2e -n hold -x $W -y $H "sleep 600"
t new-window -d -t e2e -n probe \
	"printf '\033]52;c;SGVsbG8=\007\033]2;leaked\007\007'; sleep 600"
for _ in $(seq 40); do t list-buffers 2>/dev/null | grep -q Hello && break; sleep 0.05; done
check "control: OSC 52 from a pane makes a tmux buffer" \
	bash -c "tmux -L '$TS' show-buffer | grep -q Hello"
check "control: OSC 2 from a pane sets its title" \
	test "$(t display -p -t e2e:probe '#{pane_title}')" = leaked
check "control: a bell from a pane flags its window" \
	test "$(t display -p -t e2e:probe '#{window_bell_flag}')" = 1
t delete-buffer 2>/dev/null
t kill-window -t e2e:probe

# --- open the console on a first, quiet endpoint ------------------------------------
a=$("$CORRAL" new --sandbox trusted_local --allow-control --name alpha -- "$AGENT")
wait_screen "$a" ready || fail "alpha never started"
t new-window -d -t e2e -n con "$CONSOLE"
check "the console shows the lease list" wait_pane alpha
check "the focused endpoint is resized to the pane" agent_sees "$a" "winch 39x83"
check "its screen is drawn in the pane" wait_pane "winch 39x83"
before=$(settled_pane)
cur_before=$(fmt '#{cursor_x},#{cursor_y}')
title_before=$(fmt '#{pane_title}')
check "the status line names the focused lease" wait_status alpha

# --- three endpoints appear in the background ---------------------------------------
b=$("$CORRAL" new --sandbox trusted_local --allow-control --name bravo -- "$AGENT")
c=$("$CORRAL" new --sandbox trusted_local --allow-control --name charlie -- "$AGENT")
d=$("$CORRAL" new --sandbox trusted_local --allow-control \
	--name $'delta\e]2;owned\a' -- "$AGENT")
for x in "$b" "$c" "$d"; do wait_screen "$x" ready || fail "$x never started"; done
check "new leases join the list" wait_pane charlie
"$CORRAL" send "$c" 'title pwned\r'
"$CORRAL" send "$c" "raw $(hex $'\e]52;c;SGVsbG8=\a')\r"
"$CORRAL" send "$c" "raw $(hex $'\e]0;osc0\a\e]52;p;SGVsbG8=\e\\')\r"
"$CORRAL" send "$c" "raw $(hex $'\e[10;20Hmoved\e[?25l\e[?1049h')\r"
"$CORRAL" send "$c" 'bell\r'
check "the agent's bell became a toast in the console" wait_pane "bell from charlie"
check "charlie's title reached its own screen model" \
	jq_eq "$("$CORRAL" screen "$c" --json)" .title osc0
# The bell, sent after every escape, is the marker: its toast is drawn from
# a status of charlie that holds all of them, so the console has handled
# them when the toast shows.
after=$(settled_pane)
check "the focused pane did not change (SPEC 4.2)" test "$before" = "$after"
# (tmux shows the cursor where curses is writing while it draws: on a
# loaded machine a redraw can be under way; the cursor must come back)
cursor_at() { test "$(fmt '#{cursor_x},#{cursor_y}')" = "$1"; }
check "the cursor did not move" poll cursor_at "$cur_before"
check "the outer terminal's title did not change (SPEC 4.7)" \
	test "$(fmt '#{pane_title}')" = "$title_before"
check "no bell reached the outer terminal" test "$(fmt '#{window_bell_flag}')" = 0
check "no OSC 52 reached the outer terminal (no tmux buffer)" \
	test -z "$(t list-buffers 2>/dev/null)"
check "the clipboard payload never shows" bash -c "! tmux -L '$TS' capture-pane -p -t e2e:con | grep -q Hello"
check "the status line still names alpha" wait_status alpha
check "the bell is a badge on charlie's row" grep -qE '^ .\* charlie' <<<"$(screen)"
check "a name with escapes is shown escaped" grep -qF 'delta\x1b]2;' <<<"$(screen)"

# --- typing: only after an explicit key ---------------------------------------------
t send-keys -t e2e:con j
check "j moves the focus to bravo" wait_status bravo
check "bravo is resized to the pane on focus" agent_sees "$b" "winch 39x83"
# agent_lines ID: its screen's non-blank lines (what the agent printed and
# its terminal echoed)
agent_lines() { "$CORRAL" screen "$1" | grep -v '^$'; }
snap=$(agent_lines "$b")
t send-keys -t e2e:con e s w	# unbound letters (t opens the timeline)
t send-keys -t e2e:con j
check "j moves on to charlie" wait_status charlie
t send-keys -t e2e:con k
wait_status bravo
t send-keys -t e2e:con Enter
check "Enter starts typing" wait_pane TYPING
t send-keys -t e2e:con k e y s Enter
check "typed text reaches the agent" agent_sees "$b" "keys ready"
# The typed line is the marker: the console sends it after anything it
# could have sent before Enter, so once the agent has answered it, its
# terminal shows every key it got: the typed line alone.
check "keys before Enter (and selection keys) never reach the agent" \
	test "$(agent_lines "$b")" = "$snap"$'\n'"keys"$'\n'"keys ready"
t send-keys -t e2e:con a
check "a letter arrives as itself" agent_sees "$b" "keys: 61"
t send-keys -t e2e:con Up
check "Up arrives as an arrow key" agent_sees "$b" "keys: 1b 5b 41"
t send-keys -t e2e:con Down
check "Down arrives" agent_sees "$b" "keys: 1b 5b 42"
t send-keys -t e2e:con Right
check "Right arrives" agent_sees "$b" "keys: 1b 5b 43"
t send-keys -t e2e:con Left
check "Left arrives" agent_sees "$b" "keys: 1b 5b 44"
t send-keys -t e2e:con C-a
check "C-a arrives as 01" agent_sees "$b" "keys: 01"
t send-keys -t e2e:con M-x
check "Alt-x arrives as ESC x" agent_sees "$b" "keys: 1b 78"
t send-keys -t e2e:con C-b C-b
check "the prefix twice sends the prefix" agent_sees "$b" "keys: 02"
t send-keys -t e2e:con C-d
check "C-d ends the agent's key mode" agent_sees "$b" "keys done"
t send-keys -t e2e:con C-b Escape
check "the prefix then Esc stops typing" wait_pane NORMAL
snap=$(agent_lines "$b")
t send-keys -t e2e:con x
wait_pane "cancel bravo"
t send-keys -t e2e:con n
check "cancel asks and a no cancels nothing" wait_pane "not done"
# The marker again: a line typed after Enter, answered by the agent.
t send-keys -t e2e:con Enter
wait_pane TYPING
t send-keys -t e2e:con -l "echo mark"
t send-keys -t e2e:con Enter
agent_sees "$b" "got: mark"
check "after typing stops, keys stay in the console" \
	test "$(agent_lines "$b")" = "$snap"$'\n'"echo mark"$'\n'"got: mark"
t send-keys -t e2e:con C-b Escape
wait_pane NORMAL

# --- SIGKILL the console; every agent runs on; each screen comes back -----------------
declare -A shot cur
names=(alpha bravo charlie delta)
t send-keys -t e2e:con g
i=0
for x in "$a" "$b" "$c" "$d"; do
	wait_status "${names[$i]}"
	i=$((i + 1))
	shot[$x]=$(settled_pane)
	cur[$x]=$(fmt '#{cursor_x},#{cursor_y}')
	t send-keys -t e2e:con j
done
cpid=$(console_pid)
check "the console runs" test -n "$cpid"
kill -9 "$cpid"
check "the console died of SIGKILL" wait_rc 137
js=$("$CORRAL" ls --json)
check "the four agents still run" \
	test "$(echo "$js" | jq '[.[] | select(.lease_state=="running" and .lost==null)] | length')" = 4
for x in "$a" "$b" "$c" "$d"; do
	check "holder of $x is alive" kill -0 "$(holder_pid "$x")"
done
t respawn-pane -t e2e:con "$CONSOLE"
wait_status alpha
t send-keys -t e2e:con g
i=0
for x in "$a" "$b" "$c" "$d"; do
	wait_status "${names[$i]}"
	i=$((i + 1))
	now=$(settled_pane)
	check "screen of $x is identical after reopening (SPEC 4.5)" \
		test "$now" = "${shot[$x]}"
	check "cursor of $x is where it was" \
		test "$(fmt '#{cursor_x},#{cursor_y}')" = "${cur[$x]}"
	t send-keys -t e2e:con j
done

# --- resize, scrollback, the mouse wheel ------------------------------------------
t send-keys -t e2e:con g
wait_pane "winch 39x83"
t resize-window -t e2e:con -x 100 -y 30
check "an outer resize resizes the focused endpoint" agent_sees "$a" "winch 29x69"
"$CORRAL" send "$a" 'spam 80\r'
check "output reaches the pane" wait_pane "line 79"
check "early lines have scrolled off" bash -c "! tmux -L '$TS' capture-pane -p -t e2e:con | grep -q 'line 20\$'"
t send-keys -t e2e:con PPage
check "PgUp shows the scrollback" wait_pane "line 30"
check "a scroll tag shows the position" bash -c "tmux -L '$TS' capture-pane -p -t e2e:con | grep -qE '\[[0-9]+/[0-9]+\]'"
tag() { screen | grep -oE '\[[0-9]+/[0-9]+\]' | head -1; }
t1=$(tag)
# an X10 wheel-down report over the pane (button 65 -> 0x61 'a')
t send-keys -t e2e:con -l $'\e[Ma]+'
for _ in $(seq 40); do [ "$(tag)" != "$t1" ] && break; sleep 0.05; done
check "the mouse wheel scrolls" test "$(tag)" != "$t1"
t send-keys -t e2e:con q
check "q leaves the scrollback" wait_pane_gone "$t1"
check "back on the live screen" wait_pane "line 79"

# --- lost holders: wedged, then dead -----------------------------------------------
t send-keys -t e2e:con G	# focus delta
wait_status delta
hp=$(holder_pid "$d")
kill -STOP "$hp"
check "a wedged holder shows as lost" wait_pane "did not answer" 15
check "with an L badge on its row" grep -qE '^.L.*delta' <<<"$(screen)"
t send-keys -t e2e:con k
check "the console still answers keys" wait_status charlie
kill -CONT "$hp"
t send-keys -t e2e:con j
wait_status delta
check "it recovers when the holder answers again" wait_pane_gone "did not answer" 15
check "its badge is no longer L" bash -c "! tmux -L '$TS' capture-pane -p -t e2e:con | grep -qE '^.L.*delta'"
kill -9 "$hp"
check "a dead holder shows as lost with a reason" wait_pane "is gone" 15

# --- an agent that ends in the background: a badge, unseen until focused -------
"$CORRAL" send "$b" 'exit 3\r'
check "a background exit shows failed, marked unseen" wait_match '^ F\* bravo'
check "the journal says unseen" wait_field "$b" unseen true
check "the focus stayed on delta" wait_status delta
t send-keys -t e2e:con k k
check "focusing it" wait_status bravo
check "marks it seen" wait_field "$b" unseen false
check "and shows its final screen" wait_pane "exit 3"

# --- quit leaves the agents; attach opens on one; cancel asks first --------------
t send-keys -t e2e:con q
check "q quits with status 0" wait_rc 0
check "quitting leaves the agents running" test "$("$CORRAL" ls --json |
	jq '[.[] | select(.lease_state=="running" and .lost==null)] | length')" = 2
# delta's holder was killed (SIGKILL, by its PID) under the last console:
# the journal still says running until a console starts and reconciles.
check "delta's journal still says running" test "$(lease_field "$d" lease_state)" = running
t respawn-pane -t e2e:con "$CONSOLE attach charlie"
check "attach opens focused on the lease" wait_status charlie
delta_failed() { [ "$(lease_field "$d" lease_state)" = failed ]; }
check "the console's start reconciles: delta is no longer running" poll delta_failed
check "... it failed holder_lost" test "$(lease_field "$d" failed_reason)" = holder_lost
t send-keys -t e2e:con x
check "x asks before cancelling" wait_pane "cancel charlie"
t send-keys -t e2e:con y
check "y cancels the lease" wait_field "$c" lease_state cancelled
check "its row shows cancelled" wait_match '^>C +charlie'
# the timeline (issue 9): a row per lease; R refuses a trusted_local lease
t send-keys -t e2e:con t
check "t opens the timeline" wait_pane "timeline "
check "the timeline has alpha's and charlie's rows" bash -c \
	"tmux -L '$TS' capture-pane -p -t e2e:con | grep -qE '^[ >] alpha ' &&
	 tmux -L '$TS' capture-pane -p -t e2e:con | grep -qE '^> charlie .*blocked'"
t send-keys -t e2e:con q
check "q closes it" wait_pane_gone "timeline "
t send-keys -t e2e:con R
check "R on a trusted_local lease says it has no result" \
	wait_status "trusted_local: it has no result to review"
t send-keys -t e2e:con C-b d
check "C-b d detaches with status 0" wait_rc 0
check "alpha still runs" test "$(lease_field "$a" lease_state)" = running
expect_rc 2 "attach without an ID is a usage error" "$CORRAL" attach
expect_rc 1 "attach to an unknown lease fails" "$CORRAL" attach nosuchlease

finish
