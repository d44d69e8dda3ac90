#!/bin/sh
# Demo agent: streams coloured build-like output under a spinner, forever
# (until cancelled), the way coding agents show progress.
frames='|/-\'
i=0
n=0
printf '\033]2;demo: spinner\007'
while :; do
	n=$((n + 1))
	case $((n % 4)) in
	0) printf '\033[32m✔\033[0m step %d: tests passed\n' "$n" ;;
	1) printf '\033[36mℹ\033[0m step %d: reading \033[1msrc/module_%d.c\033[0m\n' "$n" "$n" ;;
	2) printf '\033[33m⚠\033[0m step %d: 3 warnings in \033[38;5;208mlint\033[0m\n' "$n" ;;
	3) printf '\033[38;2;150;120;255m✎\033[0m step %d: editing 2 files\n' "$n" ;;
	esac
	k=0
	while [ $k -lt 10 ]; do
		f=$(printf '%s' "$frames" | cut -c $((i % 4 + 1)))
		printf '\r\033[35m%s\033[0m Working… (%ds · esc to interrupt)\033[K' "$f" "$n"
		i=$((i + 1))
		k=$((k + 1))
		sleep 0.1
	done
	printf '\r\033[K'
done
