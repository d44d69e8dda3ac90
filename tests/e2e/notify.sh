#!/usr/bin/env bash
# notify.sh: notifications in the console (SPEC 5.6): with [notify] bell =
# on in the operator's config, a lease reaching done rings the OUTER
# terminal's bell (tmux's window bell flag, observed from the host) — and
# focus does not move. Without the setting no bell reaches the outer
# terminal (console.sh).
set -u
. "$(dirname "$0")/lib.bash"

AGENT="$CORRAL_FIXTURES/fake_agent"
TS="corral-notify-$$"
t() { tmux -L "$TS" "$@"; }
trap 't kill-server 2>/dev/null; cleanup' EXIT

mkdir -p "$XDG_CONFIG_HOME/corral"
cat >"$XDG_CONFIG_HOME/corral/config" <<'EOF2'
[notify]
on = blocked done failed
bell = on
EOF2
cat >"$TMP/tmux.conf" <<'EOF2'
set -g status off
set -g monitor-bell on
set -g default-size 120x40
EOF2

a=$("$CORRAL" new --sandbox trusted_local --allow-control --name first -- "$AGENT")
b=$("$CORRAL" new --sandbox trusted_local --allow-control --name second -- "$AGENT")
wait_screen "$a" ready && wait_screen "$b" ready || fail "agents did not start"
t -f "$TMP/tmux.conf" new-session -d -s n -n hold -x 120 -y 40 "sleep 600"
t new-window -d -t n -n con "env CORRAL_STATE_DIR='$CORRAL_STATE_DIR' \
XDG_CONFIG_HOME='$XDG_CONFIG_HOME' LANG=C.UTF-8 '$CORRAL' attach $a"
for _ in $(seq 100); do
	t capture-pane -p -t n:con | grep -q "first" && break; sleep 0.05
done
check "the console is up" bash -c "tmux -L '$TS' capture-pane -p -t n:con | grep -q first"
check "no bell before anything ended" \
	test "$(t display -p -t n:con '#{window_bell_flag}')" = 0
"$CORRAL" send "$b" 'exit 0\r'
"$CORRAL" wait "$b" --until done --timeout 10 >/dev/null
ok=1
for _ in $(seq 100); do
	[ "$(t display -p -t n:con '#{window_bell_flag}')" = 1 ] && { ok=0; break; }
	sleep 0.05
done
check "a background lease reaching done rings the outer bell" test "$ok" = 0
check "the focus stayed on the first lease" \
	bash -c "tmux -L '$TS' capture-pane -p -t n:con | grep -qE '^>.*first'"
"$CORRAL" cancel "$a" >/dev/null 2>&1
finish
