#!/bin/sh
# repo.sh DIR AGENTS: the throwaway repository of `corral demo` (SPEC 11):
# a tiny C project with one commit on main, plus the sandboxed demo agents
# under .demo/ (a sandbox sees only /usr and its own copy of the
# repository, so the scripts travel in the base commit). HEAD is left
# detached, so main is checked out nowhere and `corral apply` can
# fast-forward it (SPEC 7.6). Needs git; touches nothing outside DIR.
set -eu
dir=$1
agents=$2
mkdir -p "$dir/src" "$dir/.demo"
cd "$dir"
cat >README.md <<'MD'
# tinycalc

A tiny calculator, used by `corral demo`. The agents edit it in their own
sandboxes; you review each result and apply or reject it.
MD
cat >src/lexer.c <<'C'
/* lexer.c: splits an expression into tokens. */
int
lex_is_digit(int c)
{
	return c >= '0' && c <= '9';
}
C
cat >src/parser.c <<'C'
/* parser.c: parses a sum of integers. */
int lex_is_digit(int c);

int
parse_sum(const char *s)
{
	int sum = 0, n = 0;

	for (; *s; s++) {
		if (lex_is_digit(*s)) {
			n = n * 10 + (*s - '0');
		} else {
			sum += n;
			n = 0;
		}
	}
	return sum + n;
}
C
cat >src/main.c <<'C'
/* main.c: prints the sum of its argument. */
#include <stdio.h>

int parse_sum(const char *s);

int
main(int argc, char **argv)
{
	printf("%d\n", argc > 1 ? parse_sum(argv[1]) : 0);
	return 0;
}
C
for f in ask.sh finish.sh fail.sh egress.sh; do
	cp "$agents/$f" ".demo/$f"
done
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
g() {
	git -c user.name='corral demo' -c user.email=demo@corral.invalid \
	    -c commit.gpgsign=false -c core.hooksPath=/dev/null "$@"
}
g init -q -b main .
g add -A
g commit -q -m 'tinycalc: a tiny calculator'
g checkout -q --detach
