#!/usr/bin/env bash
# demo_clean.sh: what demos leave is removable (issue 21): `corral gc
# --older-than` removes the demo repositories no lease uses any more once
# they are that old, and `corral demo --clean` removes every finished
# demo lease (as `corral gc ID`) and then the repositories no live lease
# uses, naming a live one to end first.
set -u
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/../acceptance/host.bash"
export LC_ALL=C.UTF-8

needs_root "bwrap leases"
out=$("$CORRAL" demo --no-console --json) || { fail "demo --no-console"; finish; exit; }
REPO=$(jq -r .repository <<<"$out")
ids=$(jq -r '.leases[].id' <<<"$out")
ASK=$(jq -r '.leases[] | select(.name == "demo-question") | .id' <<<"$out")
check "the demo repository exists" test -d "$REPO/.git"

# An old repository no lease uses (a demo whose leases were gc'd by ID).
mkdir -p "$CORRAL_STATE_DIR/demo/repo-stale00/.git"
touch -d '3 days ago' "$CORRAL_STATE_DIR/demo/repo-stale00"
g=$("$CORRAL" gc --older-than 2d)
check "gc --older-than removes the old unused demo repository" bash -c \
	"grep -qx 'removed demo repository $CORRAL_STATE_DIR/demo/repo-stale00' <<<'$g' &&
	 test ! -e '$CORRAL_STATE_DIR/demo/repo-stale00'"
check "... and keeps the one its leases use" test -d "$REPO/.git"

check "the question blocks" "$CORRAL" wait "$ASK" --until blocked --timeout 30
"$CORRAL" demo --clean >"$TMP/clean.out" 2>"$TMP/clean.err"
check "demo --clean with live leases: refused for them (exit 1)" test $? = 1
check "... naming the live one and what to do" grep -qF \
	"$ASK (demo-question) is running: cancel it first ('corral cancel $ASK'); its repository is kept" "$TMP/clean.err"
check "... keeping their repository" test -d "$REPO/.git"

# End them all: cancel what runs, then reject each (a result, or a
# failed one's quarantine); a cancelled one refuses, which is fine.
for i in $ids; do
	"$CORRAL" cancel "$i" >/dev/null 2>&1
	"$CORRAL" wait "$i" --until result_ready,failed,cancelled --timeout 60 >/dev/null 2>&1
done
for i in $ids; do
	poll has_receipt "$i" teardown
	"$CORRAL" reject "$i" >/dev/null 2>&1
done
none_live() { jq_eq "$("$CORRAL" ls --json)" length 0; }
check "every demo lease has ended" poll none_live
c=$("$CORRAL" demo --clean 2>&1); rc=$?
check "demo --clean exits 0" test "$rc" = 0
check "... removed each finished lease" test "$(grep -c '^removed 2' <<<"$c")" = 5
check "... and the repository" bash -c "grep -qx 'removed demo repository $REPO' <<<'$c' && test ! -e '$REPO'"
check "nothing of the demo is left in the journal" jq_eq "$("$CORRAL" ls --all --failed --json)" length 0
check "no demo repository is left" bash -c "! ls -d '$CORRAL_STATE_DIR'/demo/repo-* 2>/dev/null"
check "demo --clean with nothing to clean: exit 0" "$CORRAL" demo --clean
check "--clean goes alone" expect_rc 2 "demo --clean --no-console" "$CORRAL" demo --clean --no-console

finish
