#!/bin/sh
# Generate docs/corral.1 from the command table (`corral --help` and
# `corral CMD --help`), so the man page always matches the code.
#   scripts/gen-man.sh BUILD/tui/corral [OUT]   (OUT defaults to docs/corral.1)
set -eu
bin=$1
out=${2:-$(dirname "$0")/../docs/corral.1}
esc() { sed -e 's/\\/\\e/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\&'/"; }
{
	echo '.TH CORRAL 1 "" "corral '"$("$bin" --version | cut -d' ' -f2)"'" "User Commands"'
	echo '.SH NAME'
	echo 'corral \- a terminal supervisor for concurrent coding agents'
	echo '.SH SYNOPSIS'
	echo '.B corral'
	printf '%s\n' '[\fICOMMAND\fR [\fIARGS\fR...]]'
	echo '.SH DESCRIPTION'
	"$bin" --help | sed -n '3,4p' | esc
	echo '.PP'
	echo 'Without a command, corral opens the console on every live lease.'
	echo '.SH COMMANDS'
	"$bin" --help | awk '/^commands:/ {on=1; next} on && /^  [a-z]/ {print $1}' |
	while read -r c; do
		echo '.TP'
		"$bin" "$c" --help | head -1 | sed 's/^usage: //' | esc | sed 's/^/.B /'
		"$bin" "$c" --help | tail -n +3 | esc
	done
	echo '.SH ENVIRONMENT'
	echo '.TP'
	echo '.B CORRAL_STATE_DIR'
	echo 'The state directory; else $XDG_STATE_HOME/corral, else ~/.local/state/corral.'
	echo '.TP'
	echo '.B XDG_CONFIG_HOME'
	echo 'Configuration lives in $XDG_CONFIG_HOME/corral (config, agents/, themes).'
	echo '.TP'
	echo '.B NO_COLOR'
	echo 'When set, the console draws without colour.'
	echo '.SH EXIT STATUS'
	printf '%s\n' '0 on success; 2 for usage errors; 124 when \fBwait\fR times out; 3 when'
	echo 'a waited-for lease ended in another state; 30, 13 and 14 for the preflight'
	echo 'halts isolation_unsatisfiable, credential_scope_invalid and'
	echo 'hermeticity_violation; other failures 1 with a one-line reason on stderr.'
	echo '.SH SEE ALSO'
	echo 'The user guide, architecture and security model in the docs/ directory.'
} >"$out"
