#!/usr/bin/env bash
# attach_fidelity.sh: the console shows what the model holds (issue 22).
# Each 80x24 recording of tests/fixtures/tmuxdiff (real programs, and the
# real Claude Code and Codex) is written by a lease's program; `corral
# attach` in a tmux pane (a 256-colour terminal) resizes it to its pane,
# which rewraps it, and the pane's cells are compared with the model's of
# the same moment (corral screen --json) by pane_vs_model.py: text and
# attributes exactly, colours as a 256-colour terminal can show them.
# The model itself is compared with tmux by pty/tmuxdiff.
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

n=0
while read -r name rows cols; do
	case $name in '#'*|'') continue ;; esac
	[ "$rows $cols" = "24 80" ] || continue
	n=$((n + 1))
	done_file="$TMP/$name.done"
	id=$("$CORRAL" new --sandbox trusted_local --allow-control --name "$name" -- sh -c \
		"cat '$FIX/$name.bytes'; touch '$done_file'; exec sleep 600" </dev/null)
	valid_id "$id" || { fail "$name: corral new"; continue; }
	poll test -e "$done_file" || { fail "$name: the program never wrote it"; continue; }
	t new-window -d -t e2e -n con "env CORRAL_STATE_DIR='$CORRAL_STATE_DIR' LANG=C.UTF-8 '$CORRAL' attach $id"
	ok=0
	for _ in $(seq 200); do
		[ "$(model_size "$id")" = "$PANE_ROWS $PANE_COLS" ] && { ok=1; break; }
		sleep 0.05
	done
	check "$name: attach resizes it to the pane" test "$ok" = 1
	settled "$id" || fail "$name: the screen never settled"
	"$CORRAL" screen "$id" --json >"$TMP/model.json"
	t capture-pane -e -p -t e2e:con >"$TMP/pane.txt"
	if python3 "$CORRAL_SRC/tests/e2e/pane_vs_model.py" "$TMP/pane.txt" \
		"$PANE_X" 0 "$TMP/model.json" >"$TMP/diff.txt" 2>&1; then
		pass "$name: the console's pane shows the model's cells"
	else
		fail "$name: the console's pane shows the model's cells"
		cat "$TMP/diff.txt"
	fi
	t kill-window -t e2e:con
	"$CORRAL" cancel "$id" >/dev/null 2>&1
done <"$FIX/INDEX"
check "every 80x24 recording was shown" test "$n" -ge 20

finish
