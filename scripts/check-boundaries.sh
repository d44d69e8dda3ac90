#!/bin/sh
# Module boundaries (STYLE A): which headers each module may include.
# Run by CTest as style/boundaries; prints every violation and fails.
#   scripts/check-boundaries.sh [TREE]   (default: this script's tree)
# The files are found with find(1), not git: an exported tarball and new
# files git does not track yet (CMake compiles them all) are checked too.
set -u
cd "${1:-$(dirname "$0")/..}" || exit 2
bad=0
# One grep a rule, over all its files (a grep a file made make test's
# planted cases take minutes on a loaded machine); a file that does not
# exist is no violation.
no() { # no PATTERN FILES... : none of FILES may match PATTERN
	pat=$1; shift
	[ $# -gt 0 ] || return 0
	hits=$(grep -sHnE -- "$pat" "$@")
	[ -n "$hits" ] || return 0
	printf '%s\n' "$hits"
	bad=$((bad + $(printf '%s\n' "$hits" | cut -d: -f1 | sort -u | wc -l)))
}
# The tree's C sources, once: relative paths, build directories left out.
ALL=$(find . \( -path './build*' -o -path ./.git -o -path ./fuzz/out \) -prune \
    -o -type f \( -name '*.c' -o -name '*.h' \) -print | sed 's|^\./||' | sort)
# src GLOB...: '*.c' or '*.h' anywhere, 'DIR/*' every source below DIR.
src() {
	for g in "$@"; do
		case $g in
		'*.'*) printf '%s\n' "$ALL" | grep -E "\\.${g#\*.}\$" ;;
		*/'*') printf '%s\n' "$ALL" | grep -F "${g%\*}" | grep -E "^${g%\*}" ;;
		esac
	done | sort -u
}
[ -d pty ] && [ -d lease ] && [ -d tui ] || { echo "boundaries: $(pwd) is not a corral tree"; exit 2; }
inc='^[[:space:]]*#[[:space:]]*include[[:space:]]*'
# Private headers stay in their module (and its tests).
no "${inc}\"pty/(pty(_holder)?|screen)_int\.h\"" $(src '*.c' '*.h' | grep -v '^pty/' | grep -v '^tests/pty/')
no "${inc}\"lease/lease_int\.h\"" $(src '*.c' '*.h' | grep -v '^lease/' | grep -v '^tests/lease/')
no "${inc}\"lease/result/result_int\.h\"" $(src '*.c' '*.h' | grep -v '^lease/result/' | grep -v '^tests/lease/')
no "${inc}\"sandbox-adapters/sbx(_proxy|_gateway|_cgroup)?_int\.h\"" $(src '*.c' '*.h' | grep -v '^sandbox-adapters/' | grep -v '^tests/sandbox-adapters/')
# Third-party types stay where they belong.
# Only the screen model's files (pty/screen*.c, screen_int.h) see libvterm.
no "${inc}<vterm\.h>|${inc}\"pty/screen_int\.h\"" $(src '*.c' '*.h' | grep -Ev '^pty/screen(_[a-z]+)?\.[ch]$|^pty/screen_int\.h$')
no "${inc}<n?curses(w)?\.h>|${inc}<ncursesw/" $(src '*.c' '*.h' | grep -v '^tui/console/surface_curses\.c$')
no "${inc}<(git2|sqlite3)\.h>" $(src 'tui/*' 'pty/*' 'sandbox-adapters/*')
# The dependency graph has no upward or sideways arrows.
no "${inc}\"(lease|tui)/" $(src 'pty/*')
no "${inc}\"(pty|tui)/" $(src 'lease/*')
no "${inc}\"(pty|tui|sandbox-adapters)/" $(src 'lease/result/*')
no "${inc}\"lease/result/" $(src 'lease/*' | grep -v '^lease/result/')
no "${inc}\"(pty|lease|tui)/|${inc}<(sqlite3|vterm)\.h>" $(src 'sandbox-adapters/*')
# tui/'s rooms: the console never reaches the sandbox or the runtime, the
# runtime never the console or the command line, their shared files none.
no "${inc}\"(sandbox-adapters|tui/runtime|tui/cli)/" $(src 'tui/console/*')
no "${inc}\"tui/(console|cli)/" $(src 'tui/runtime/*')
no "${inc}\"tui/(console|runtime|cli)/" $(src 'tui/*' | grep -v '^tui/[a-z]*/')
no "${inc}\"tui/console/console_int\.h\"" $(src '*.c' '*.h' | grep -v '^tui/console/' | grep -v '^tests/tui/')
no "${inc}\"tui/runtime/runtime_int\.h\"" $(src '*.c' '*.h' | grep -v '^tui/runtime/' | grep -v '^tests/tui/')
# Pure files touch no loop and no fds.
no "${inc}<(uv|unistd)\.h>" pty/screen*.c pty/detect.c tui/console/keys.c \
    tui/console/layout.c tui/console/redraw.c tui/console/review.c \
    tui/console/timeline.c tui/console/keymap.c tui/console/draw_view.c \
    tui/console/draw.c tui/escape.c tui/activity.c lease/fsm.c
no "${inc}<(uv|unistd)\.h>" pty/vtfilter*.c pty/keys.c
# The holder's output filter is injected by tui/runtime/: pty/ names no
# credential scrubber.
no 'sbx_(cred_)?scrub' $(src 'pty/*')
no "${inc}<uv\.h>" $(src 'lease/*' | grep -v '^lease/async\.c$')
# The bwrap adapter is one place: outside sandbox-adapters/ nothing calls
# its cgroup or uid-slot internals; a lease's holder goes through the
# adapter's members (.attach, .enter, .signal, .usage, .stop, .detach),
# and a check run through its exec zone (.exec, .exec_plan, .faketime):
# nothing outside calls a bwrap function by name either.
no '(^|[^a-z0-9_])sbx_(cgroup|uid|bwrap)_[a-z0-9_]+[[:space:]]*\(' \
    $(src 'tui/*' 'lease/*' 'pty/*')
# ... and an adapter is found by its name in the table (sbx_adapters_find,
# sbx_adapters_exec), never taken by its object's name.
no '(^|[^a-z0-9_])sbx_adapter_[a-z0-9_]+' $(src 'tui/*' 'lease/*' 'pty/*')
# lease/ takes two things from sandbox-adapters/, both of a workspace: the
# project's one removal of a tree a sandbox may have written
# (sbx_workspace_rmtree_safe) and the unmount of its bounded image before
# that removal (sbx_workspace_release: a result's workspace released,
# lease/release.c, journal first).
no "${inc}\"sandbox-adapters/sbx_" $(src 'lease/*')
calls=$(grep -sHnoE '(^|[^a-z0-9_])sbx_[a-z0-9_]+[[:space:]]*\(' $(src 'lease/*') |
    grep -vE ':[^a-z0-9_]?sbx_workspace_(rmtree_safe|release)[[:space:]]*\($')
if [ -n "$calls" ]; then
	printf '%s\n' "$calls"
	bad=$((bad + $(printf '%s\n' "$calls" | cut -d: -f1 | sort -u | wc -l)))
fi
if [ "$bad" -ne 0 ]; then
	echo "boundaries: $bad file(s) break STYLE A"
	exit 1
fi
echo "boundaries: ok"
