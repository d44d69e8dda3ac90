#!/bin/sh
# Demo agent: does its job in a few seconds and exits 0 (the "done" state).
printf '\033]2;demo: finisher\007'
for f in parser.c lexer.c main.c; do
	printf 'Refactoring \033[1m%s\033[0m ' "$f"
	for _ in 1 2 3; do printf '.'; sleep 0.3; done
	printf ' \033[32mdone\033[0m\n'
done
printf '\033[1;32mAll 3 files refactored; 0 tests failing.\033[0m\n'
exit 0
