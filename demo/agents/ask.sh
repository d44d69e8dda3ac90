#!/bin/sh
# Demo agent: does a little work, then asks a y/n question and waits for the
# operator (the "blocked" state), then reports what it was told.
printf '\033]2;demo: question\007'
printf 'Planning changes to \033[1mREADME.md\033[0m...\n'
sleep 1
printf '\033[1;33m?\033[0m Apply the edit to README.md? (y/n) '
read -r answer
case $answer in
y | Y | yes) printf '\033[32mApplied.\033[0m\n' ;;
*) printf '\033[31mSkipped.\033[0m\n' ;;
esac
printf '> '
read -r _
