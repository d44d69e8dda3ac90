#!/usr/bin/env bash
# name_race.sh: names are unique among live leases (issue 21) even when
# several `corral new --name X` start at the same moment: real processes
# on one real journal (SQLite), released together by a FIFO, each a
# trusted_local lease that stays live. Every one gets a name of its own
# (X, X-2 ... X-N, the journal's insert choosing in its own transaction),
# and an ended lease's name is free again.
set -u
. "$(dirname "$0")/lib.bash"

N=8
GO=$TMP/go
mkfifo "$GO"
exec 3<>"$GO"	# held open (read-write: no wait), so a late racer still reads
# A first command makes the journal, so the racers meet on its tables and
# not on its creation.
"$CORRAL" ls >/dev/null || fail "ls makes the journal"
pids=()
for i in $(seq "$N"); do
	( read -r _ <"$GO"; exec "$CORRAL" new --sandbox trusted_local --allow-control --name racer 3>&- \
		-- sleep 120 ) >"$TMP/id.$i" 2>"$TMP/err.$i" &
	pids+=($!)
done
# all wait on the FIFO; a line each lets them all go at once
printf '\n%.0s' $(seq "$N") >&3
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
exec 3>&-
check "all $N corral new succeeded" test "$rc" = 0
for i in $(seq "$N"); do
	valid_id "$(cat "$TMP/id.$i")" || fail "racer $i printed no ID: $(cat "$TMP/id.$i" "$TMP/err.$i")"
done
ls=$("$CORRAL" ls --json)
check "$N live leases" jq_eq "$ls" '[.[] | select(.name | test("^racer"))] | length' "$N"
check "their names are all different" jq_eq "$ls" \
	'[.[] | select(.name | test("^racer")) | .name] | unique | length' "$N"
want="racer $(for i in $(seq 2 "$N"); do printf 'racer-%s ' "$i"; done)"
check "racer, racer-2 ... racer-$N" jq_eq "$ls" \
	'[.[] | select(.name | test("^racer")) | .name] | sort_by(ltrimstr("racer") | ltrimstr("-") | tonumber? // 1) | join(" ")' \
	"${want% }"
check "each renamed one was told its name" bash -c \
	"[ \"\$(cat '$TMP'/err.* | grep -c \"a live lease is named 'racer': this one is 'racer-\")\" = $((N - 1)) ]"

# an ended lease's name is free again: the next one takes it
first=$(jq -r '.[] | select(.name == "racer-2") | .id' <<<"$ls")
"$CORRAL" cancel "$first" >/dev/null 2>&1
check "racer-2 cancelled" "$CORRAL" wait "$first" --until cancelled --timeout 30
id=$("$CORRAL" new --sandbox trusted_local --allow-control --name racer -- sleep 120 2>/dev/null)
check "a new racer gets the freed racer-2" jq_eq "$("$CORRAL" show "$id" --json)" .name racer-2
for i in $(seq "$N"); do "$CORRAL" cancel "$(cat "$TMP/id.$i")" >/dev/null 2>&1; done
"$CORRAL" cancel "$id" >/dev/null 2>&1
finish
