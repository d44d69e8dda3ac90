#!/usr/bin/env bash
# preflight_crash.sh: the preflight's own host resources are journaled
# (issue 15; SPEC 9.2): `corral doctor` is SIGKILLed at each of its
# state-changing syscalls (strace); after every kill, each probe cgroup and
# scratch directory of this state directory on the host is named by a row
# of the journal's probes table (identity before creation), and the next
# `corral reconcile` leaves none on the host and no row. A last doctor run
# leaves nothing either.
set -u
. "$(dirname "$0")/lib.bash"

needs_root
command -v strace >/dev/null || { echo "strace is required (scripts/packages.txt)"; exit 1; }
DB=$CORRAL_STATE_DIR/corral.db
SET=mkdir,rmdir,unlink,unlinkat,pwrite64,fdatasync

# rows: the journal's probe rows, "kind identity" a line
rows() {
	python3 - "$DB" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=10)
for k, i in db.execute("SELECT kind, identity FROM probes"):
    print(k, i)
EOF
}
# on_host: this state directory's probe cgroups and scratch directories
on_host() {
	find /sys/fs/cgroup -maxdepth 7 -type d -path "*/corral/$TAG/lease-doctor-*" 2>/dev/null |
		sed 's|.*/lease-||' | sort -u | sed 's/^/probe_cgroup /'
	for d in /tmp/corral-doctor-"$TAG"-*; do
		[ -d "$d" ] && echo "probe_dir $d"
	done
}
# unjournaled: what is on the host with no row naming it
unjournaled() {
	local r
	r=$(rows) || { echo "no probes table"; return; }
	on_host | while read -r line; do
		grep -qxF "$line" <<<"$r" || echo "$line"
	done
}

# A traced run: the syscalls to kill at, and the state directory's tag.
"$CORRAL" doctor >/dev/null 2>&1
strace -qq -o "$TMP/trace" -e trace=$SET "$CORRAL" doctor >/dev/null 2>&1
TAG=$(grep -o 'corral-doctor-state-[0-9a-f]*' "$TMP/trace" | head -1 | sed 's/^corral-doctor-//')
check "the traced doctor made its scratch under the state's tag" test -n "$TAG"
mapfile -t NAMES < <(grep -E "^($(tr , '|' <<<"$SET"))\(" "$TMP/trace" | sed 's/(.*//')
check "the traced doctor made state changes to kill at" test "${#NAMES[@]}" -gt 20
echo "# ${#NAMES[@]} state-changing syscalls"

declare -A nth
bad_journal=0 bad_left=0 killed=0 points=0
for k in "${!NAMES[@]}"; do
	name=${NAMES[$k]}
	nth[$name]=$(( ${nth[$name]:-0} + 1 ))
	j=${nth[$name]}
	# every directory and cgroup step, and every 4th journal write
	case $name in pwrite64|fdatasync) [ $((j % 4)) = 1 ] || continue ;; esac
	points=$((points + 1))
	strace -qq -o /dev/null -e trace="$name" \
		-e inject="$name":signal=SIGKILL:when="$j" \
		"$CORRAL" doctor >/dev/null 2>&1
	[ $? = 137 ] && killed=$((killed + 1))
	u=$(unjournaled)
	if [ -n "$u" ]; then
		bad_journal=$((bad_journal + 1))
		echo "# kill $k ($name #$j): on the host, not journaled: $u"
	fi
	"$CORRAL" reconcile >/dev/null 2>&1
	left=$(on_host; rows 2>&1)
	if [ -n "$left" ]; then
		bad_left=$((bad_left + 1))
		echo "# kill $k ($name #$j): left after reconcile: $left"
		# the next iteration judges its own kill, not this one's
		"$CORRAL" doctor >/dev/null 2>&1
	fi
done
echo "# $points kill points, $killed killed"
check "most kill points were reached" test "$killed" -ge $((points * 3 / 4))
check "after every kill, all the preflight made is journaled" test "$bad_journal" = 0
check "after every kill, reconcile leaves nothing of it and no row" test "$bad_left" = 0
"$CORRAL" doctor >/dev/null 2>&1
check "a doctor run leaves nothing on the host" test -z "$(on_host)"
check "... and no row" test -z "$(rows)"
finish
