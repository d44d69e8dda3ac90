#!/bin/sh
# Demo agent (sandboxed): runs the "tests", two of which fail, and exits
# 1 (the "failed" state). Its half-done edit is kept in quarantine for
# inspection, never applied.
printf '\033]2;demo: failing\007'
printf 'Running the test suite...\n'
for t in lex_digits parse_empty parse_sum parse_overflow; do
	sleep 0.3
	case $t in
	parse_sum | parse_overflow) printf '  \033[31mFAIL\033[0m %s\n' "$t" ;;
	*) printf '  \033[32mok\033[0m   %s\n' "$t" ;;
	esac
done
echo 'int parse_overflow_todo;' >>/work/src/parser.c
printf '\033[1;31m2 of 4 tests failed; giving up.\033[0m\n'
exit 1
