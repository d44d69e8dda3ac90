#!/bin/sh
# Demo agent (sandboxed): plans an edit, then asks a y/n question and waits
# for the operator (the "blocked" state). On y it edits README.md in its
# own copy of the repository (/work) and ends: a patch to review.
printf '\033]2;demo: question\007'
printf 'Planning a usage section for \033[1mREADME.md\033[0m...\n'
sleep 1
printf '\033[1;33m?\033[0m Add a usage section to README.md? (y/n) '
read -r answer
case $answer in
y | Y | yes)
	cat >>/work/README.md <<'MD'

## Usage

    cc -o tinycalc src/*.c && ./tinycalc 1+2+3
MD
	printf '\033[32mEdited README.md.\033[0m\n'
	;;
*) printf '\033[31mLeft README.md as it was.\033[0m\n' ;;
esac
exit 0
