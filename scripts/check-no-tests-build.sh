#!/bin/sh
# check-no-tests-build.sh: the build without the test suites
# (-DCORRAL_TESTS=OFF -DCORRAL_WERROR=ON, as a package is built) still
# compiles. Run by CTest as style/no_tests_build, next to a build with them.
# The whole product takes minutes to compile here, so only what the option
# changes is compiled: the tree is configured without the tests in a
# temporary directory and each target is compared with the same target of
# BUILD. A source whose target's definitions differ and that tests one of
# the differing macros in a preprocessor line is compiled; a header that
# does makes its whole target compile; so does an object only this
# configuration has. Then the product's link: none of it, since every
# other object is the one BUILD compiled with the same flags.
#   scripts/check-no-tests-build.sh [SRC] [BUILD]   (BUILD: default SRC/build)
set -u
SRC=$(cd "${1:-$(dirname "$0")/..}" && pwd) || exit 2
ON=$(cd "${2:-$SRC/build}" && pwd) || exit 2
[ -f "$ON/CMakeCache.txt" ] || { echo "no_tests_build: $ON is not a build directory"; exit 2; }
OFF=$(mktemp -d "${TMPDIR:-/tmp}/corral-notests.XXXXXX") || exit 2
trap 'rm -rf "$OFF"' EXIT
fail=0
cmake -S "$SRC" -B "$OFF" -DCORRAL_TESTS=OFF -DCORRAL_WERROR=ON \
    >"$OFF/configure.log" 2>&1 || {
	cat "$OFF/configure.log"
	echo "no_tests_build: cmake -DCORRAL_TESTS=OFF failed"
	exit 1
}
[ ! -d "$OFF/tests" ] || { echo "no_tests_build: tests/ configured without the tests"; fail=1; }
defs() { sed -n 's/^C_DEFINES = //p' "$1" | tr ' ' '\n' | sed -n 's/^-D//p' | sort -u; }
objs() { sed -n 's|^\([^ #:]*\.c\.o\): \(/[^ ]*\.c\)$|\1 \2|p' "$1" | sort -u; }
# The product's sources and headers (tests, fuzz and build trees aside).
HDRS=$(cd "$SRC" && find . \( -path './build*' -o -path ./.git -o -path ./tests \
    -o -path ./fuzz \) -prune -o -name '*.h' -print)
n=0
for dir in $(cd "$OFF" && find . -path '*/CMakeFiles/*.dir' -type d | sort); do
	[ -f "$OFF/$dir/flags.make" ] || continue
	t=$(basename "$dir" .dir)
	todo=
	if [ -f "$ON/$dir/flags.make" ]; then
		macros=$({ defs "$ON/$dir/flags.make"; defs "$OFF/$dir/flags.make"; } |
		    sort | uniq -u | sed 's/=.*//' | sort -u | tr '\n' '|' | sed 's/|$//')
		on_objs=$(objs "$ON/$dir/build.make")
		new=$(objs "$OFF/$dir/build.make" | while read -r o s; do
			printf '%s\n' "$on_objs" | grep -qxF "$o $s" || echo "$o"
		done)
	else
		macros= new=ALL
	fi
	pp="^[[:space:]]*#[[:space:]]*(if|ifdef|ifndef|elif)\\b.*\\b($macros)\\b"
	whole=false
	[ "$new" = ALL ] && whole=true
	if [ -n "$macros" ] && (cd "$SRC" && printf '%s\n' "$HDRS" | xargs -r grep -qlE "$pp"); then
		whole=true
	fi
	if $whole; then
		echo "no_tests_build: $t, whole (${macros:-a target only this build has})"
		cmake --build "$OFF" --target "$t" -j "${JOBS:-2}" >"$OFF/$t.log" 2>&1 ||
		    { cat "$OFF/$t.log"; fail=1; }
		n=$((n + 1))
		continue
	fi
	[ -n "$macros" ] && todo=$(objs "$OFF/$dir/build.make" | while read -r o s; do
		grep -qE "$pp" "$s" && echo "$o"
	done)
	for o in $todo $new; do
		echo "no_tests_build: $o (${macros:-new})"
		(cd "$OFF" && make --no-print-directory -f "$dir/build.make" "$o") \
		    >"$OFF/obj.log" 2>&1 || { cat "$OFF/obj.log"; fail=1; }
		n=$((n + 1))
	done
done
if [ "$fail" -ne 0 ]; then
	echo "no_tests_build: a build without the tests (-DCORRAL_TESTS=OFF) fails"
	exit 1
fi
echo "no_tests_build: ok ($n compiled without the tests)"
