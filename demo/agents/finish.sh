#!/bin/sh
# Demo agent (sandboxed): refactors three files of its own copy of the
# repository (/work) in a few seconds and exits 0 (the "done" state), so
# its result is a verified patch to review and apply.
printf '\033]2;demo: finisher\007'
cd /work || exit 1
for f in lexer.c parser.c main.c; do
	printf 'Refactoring \033[1msrc/%s\033[0m ' "$f"
	for _ in 1 2 3; do printf '.'; sleep 0.3; done
	sed -i '1s|^/\* \(.*\) \*/$|/*\n * \1\n * (tidied by the corral demo agent)\n */|' "src/$f"
	printf ' \033[32mdone\033[0m\n'
done
printf '\033[1;32mAll 3 files refactored; 0 tests failing.\033[0m\n'
exit 0
