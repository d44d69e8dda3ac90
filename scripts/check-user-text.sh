#!/bin/sh
# check-user-text.sh: user-facing text never cites "SPEC n.m" (the user has
# no SPEC; text names the docs section, the command or the key instead).
# Scans README.md, every file under docs/, the shipped policies/, agents/,
# themes/ and demo/config/ files, `corral --help`, every command's
# `corral help CMD` and `corral CMD --help`, the generated man page, and the
# C string literals of tui/, lease/, sandbox-adapters/ and pty/ (comments
# keep their citations). Run by CTest as style/user_text; prints every hit
# as file:line (or the command whose help says it) and fails.
#   CORRAL_BIN=build/tui/corral [CORRAL_MAN=build/corral.1] \
#       scripts/check-user-text.sh [TREE]   (default: this script's tree)
# Files are found with find(1), not git: an exported tarball and new files
# git does not track yet are checked too.
set -u
gen_man=$(cd "$(dirname "$0")" && pwd)/gen-man.sh
bin=${CORRAL_BIN:-}
case $bin in ''|/*) ;; *) bin=$(pwd)/$bin ;; esac
man=${CORRAL_MAN:-}
case $man in ''|/*) ;; *) man=$(pwd)/$man ;; esac
cd "${1:-$(dirname "$0")/..}" || exit 2
if [ ! -d tui ] || [ ! -d docs ]; then
	echo "check-user-text: $(pwd) is not a corral tree"; exit 2
fi
pat='SPEC[[:space:]]+[0-9]'
bad=0
hit() { printf '%s\n' "$*"; bad=$((bad + 1)); }
# report LABEL FILE: FILE's citations, each as LABEL:line:text. One the text
# wraps ("SPEC" at a line's end, "5.2" on the next) counts too.
report() {
	n=$(tr '\n' ' ' <"$2" | grep -oE "$pat" | wc -l)
	[ "$n" -eq 0 ] && return 0
	grep -nE "$pat" "$2" | while IFS= read -r l; do printf '%s:%s\n' "$1" "$l"; done
	[ "$(grep -cE "$pat" "$2")" -lt "$n" ] &&
	    printf '%s: a citation wrapped over two lines\n' "$1"
	bad=$((bad + n))
}

# README.md, everything under docs/ (CODE-MAP, corral.1 if made there),
# and the files corral ships for the user to read and edit: the default
# policy, agent rule files, themes, the demo's config.
for f in README.md $(find docs policies agents themes demo/config -type f 2>/dev/null | sort); do
	[ -f "$f" ] && report "$f" "$f"
done

# C string literals: a small scanner that skips comments and character
# constants and joins adjacent literals ("a " "b", across lines too), so a
# citation split over two literals is found.
cfiles=$(for d in tui lease sandbox-adapters pty; do
	[ -d "$d" ] && find "$d" -type f \( -name '*.c' -o -name '*.h' \) -print
done | sort)
if [ -n "$cfiles" ]; then
	# shellcheck disable=SC2086 # one file name a word
	out=$(awk -v pat="$pat" '
	function flush() { lit = ""; told = 0 }
	FNR == 1 { flush(); st = 0 }
	{
		s = $0; n = length(s); i = 1
		if (st == 3) st = 0	# a // comment ends with its line
		while (i <= n) {
			c = substr(s, i, 1)
			if (st == 1) {	# in a string literal
				if (c == "\\") { lit = lit substr(s, i, 2); i += 2; continue }
				if (c != "\"") { lit = lit c; i++; continue }
				st = 0; i++
				if (!told && lit ~ pat) {
					match(lit, pat); b = RSTART > 30 ? RSTART - 30 : 1
					printf "%s:%d: string literal \"...%s...\"\n",
					    FILENAME, FNR, substr(lit, b, 60)
					told = 1
				}
				continue
			}
			if (st == 2) {	# in a block comment
				if (substr(s, i, 2) == "*/") { st = 0; i += 2; continue }
				i++; continue
			}
			if (st == 4) {	# in a character constant
				if (c == "\\") { i += 2; continue }
				if (c == "\047") st = 0
				i++; continue
			}
			if (substr(s, i, 2) == "/*") { st = 2; i += 2; continue }
			if (substr(s, i, 2) == "//") { st = 3; break }
			if (c == "\"") { st = 1; i++; continue }
			if (c == "\047") { flush(); st = 4; i++; continue }
			if (c != " " && c != "\t") flush()
			i++
		}
		if (st == 1 || st == 4) st = 0	# unterminated (a macro line)
	}' $cfiles)
	if [ -n "$out" ]; then
		printf '%s\n' "$out"
		bad=$((bad + $(printf '%s\n' "$out" | wc -l)))
	fi
fi

# The binary's help, every command's, and the man page made from them.
if [ -n "$bin" ] && [ -x "$bin" ]; then
	tmp=$(mktemp -d) || exit 2
	trap 'rm -rf "$tmp"' EXIT
	"$bin" --help >"$tmp/help" 2>&1 </dev/null
	report "corral --help" "$tmp/help"
	cmds=$(awk '/^commands:/ {on=1; next} on && /^  [a-z]/ {print $1}' "$tmp/help")
	[ -n "$cmds" ] || hit "corral --help: no command table found"
	for c in $cmds; do
		"$bin" help "$c" >"$tmp/out" 2>&1 </dev/null
		report "corral help $c" "$tmp/out"
		"$bin" "$c" --help >"$tmp/out" 2>&1 </dev/null
		report "corral $c --help" "$tmp/out"
	done
	label=$man
	if [ -z "$man" ] || [ ! -f "$man" ]; then
		man=$tmp/corral.1 label="the man page (scripts/gen-man.sh)"
		sh "$gen_man" "$bin" "$man" >/dev/null 2>&1 ||
		    hit "scripts/gen-man.sh $bin: failed"
	fi
	[ -f "$man" ] && report "$label" "$man"
else
	hit "CORRAL_BIN not set or not executable: --help and the man page not checked"
fi

if [ "$bad" -ne 0 ]; then
	echo "check-user-text: $bad citation(s) of SPEC in user-facing text; name the docs section, the command or the key instead"
	exit 1
fi
echo "check-user-text: no SPEC citation in user-facing text"
