#!/usr/bin/env bash
# boundaries_planted.sh: the boundary check itself, on an exported tree
# (a tarball: no .git) with violations planted in new files, as a
# newcomer's untracked file would be: each must fail the check, naming
# the file; the clean export must pass.
set -u
SRC=${CORRAL_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
TMP=$(mktemp -d "${TMPDIR:-/tmp}"/corral-bound.XXXXXX)
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
check "the export has no .git" test ! -e "$T/.git"
check "a clean export passes" sh "$SRC/scripts/check-boundaries.sh" "$T"
# plant FILE LINE WANT: one violation; the check fails and names FILE.
plant() {
	local f=$1 line=$2 out
	mkdir -p "$(dirname "$T/$f")"
	printf '/* planted */\n%s\n' "$line" >"$T/$f"
	out=$(sh "$SRC/scripts/check-boundaries.sh" "$T" 2>&1)
	local rc=$?
	rm -f "$T/$f"
	[ "$rc" -ne 0 ] && grep -q "^$f:" <<<"$out"
}
check "the console may not include the sandbox" plant tui/console/zz_plant.c '#include "sandbox-adapters/sbx.h"'
check "only the screen model's files include vterm.h" plant pty/zz_plant.c '#include <vterm.h>'
check "only the screen model's files include its header" plant pty/zz_plant.c '#include "pty/screen_int.h"'
check "only the curses surface includes curses.h" plant tui/cli/zz_plant.c '#include <curses.h>'
check "lease/result depends on lease only" plant lease/result/zz_plant.c '#include "pty/pty.h"'
check "lease/ never includes tui/" plant lease/zz_plant.h '#include "tui/tui.h"'
check "a private header stays in its module" plant tui/zz_plant.c '#include "pty/pty_int.h"'
check "the runtime calls no cgroup internals" plant tui/runtime/zz_plant.c 'int f(void) { return sbx_cgroup_signal(0, 15); }'
check "the runtime calls no uid-slot internals" plant tui/runtime/zz_plant.c 'int f(void) { return sbx_uid_mkdir_root("/x", 0755); }'
check "lease/ calls no cgroup internals" plant lease/zz_plant.c 'x = sbx_cgroup_parse (id, t, &cg);'
check "the check runner calls no bwrap function by name" plant tui/runtime/zz_plant.c 'int f(void) { return sbx_bwrap_run_exec_plan(0, 0, 0); }'
check "pty/ calls no bwrap function by name" plant pty/zz_plant.c 'const char *f(void) { return sbx_bwrap_faketime_path (); }'
check "the runtime takes no adapter object by name" plant tui/runtime/zz_plant.c 'const void *f(void) { return &sbx_adapter_bwrap; }'
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
