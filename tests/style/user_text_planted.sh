#!/usr/bin/env bash
# user_text_planted.sh: scripts/check-user-text.sh itself, on an exported
# tree (no .git) with a SPEC citation planted in each kind of place it
# reads: each must fail the check, naming the file and line; comments keep
# their citations; the clean export must pass.
set -u
SRC=${CORRAL_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
TMP=$(mktemp -d "${TMPDIR:-/tmp}"/corral-text.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
PASS=0 FAIL=0
check() { # check NAME CMD...
	local n=$1; shift
	if "$@"; then echo "ok - $n"; PASS=$((PASS + 1)); else echo "not ok - $n"; FAIL=$((FAIL + 1)); fi
}
tar -C "$SRC" --exclude='./build*' --exclude=./.git --exclude=./fuzz/out -cf - . |
    tar -C "$TMP" -xf - || { echo "not ok - export"; exit 1; }
mkdir "$TMP/x" && mv "$TMP"/* "$TMP/x/" 2>/dev/null
T=$TMP/x
run() { sh "$SRC/scripts/check-user-text.sh" "$T" 2>&1; }
check "a clean export passes" run
# plant FILE WANT TEXT: FILE holds TEXT; the check fails and names WANT
# (FILE:LINE), or passes when WANT is "pass". FILE is removed afterwards.
plant() {
	local f=$1 want=$2 out rc
	mkdir -p "$(dirname "$T/$f")"
	printf '%b' "$3" >"$T/$f"
	out=$(run); rc=$?
	rm -f "$T/$f"
	if [ "$want" = pass ]; then [ "$rc" -eq 0 ]; return; fi
	[ "$rc" -ne 0 ] && grep -q "^$want:" <<<"$out"
}
check "docs/: a citation" plant docs/zz_plant.md docs/zz_plant.md:2 \
    '# plant\nSee SPEC 7.2 for the rules.\n'
check "docs/: a citation wrapped over two lines" plant docs/zz_plant.md docs/zz_plant.md \
    '# plant\nthe gate (SPEC\n7.2) says no.\n'
check "a shipped theme's comment" plant themes/zz_plant.theme themes/zz_plant.theme:1 \
    '# zz_plant.theme: dark (SPEC 4.6)\nname = zz\n'
check "a C string in tui/" plant tui/cli/zz_plant.c tui/cli/zz_plant.c:2 \
    '/* planted */\nstatic const char *h = "Cancel (SPEC 5.5): SIGINT";\n'
check "a C string split over two literals" plant lease/zz_plant.c lease/zz_plant.c:3 \
    '/* planted */\nstatic const char *h = "as seen (SPEC "\n\t"5.2); --json";\n'
check "a message in sandbox-adapters/" plant sandbox-adapters/zz_plant.c sandbox-adapters/zz_plant.c:2 \
    '/* planted */\nvoid f(char *w) { snprintf(w, 9, "no (SPEC 8.5)"); }\n'
check "comments keep their citations" plant tui/zz_plant.c pass \
    '/* zz_plant.c: SPEC 4.2 */\n// SPEC 4.3\nstatic char q = \047"\047; /* SPEC 4.7 */\n'
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
