# corral.bash: bash completion for corral (issue 9 item 6), installed by
# `make install` into share/bash-completion/completions/corral. Commands and
# options are read from the binary's own --help, so they always match the
# command table; lease IDs come from `corral ls --all`.

_corral_commands()
{
	"$1" --help 2>/dev/null |
	    sed -n '/^commands:/,/^$/{s/^  \([a-z][a-z]*\) .*/\1/p;s/^  \([a-z][a-z]*\)$/\1/p}'
}

_corral_options()
{
	"$1" "$2" --help 2>/dev/null | sed -n '1s/^usage: //p' |
	    grep -o -- '--[a-z][a-z-]*' | sort -u
}

_corral_ids()
{
	"$1" ls --all 2>/dev/null | awk 'NR > 1 && $1 ~ /^[A-Za-z0-9_-]+$/ { print $1 }'
}

_corral()
{
	local bin=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]}
	local prev=${COMP_WORDS[COMP_CWORD-1]} cmd="" i words

	COMPREPLY=()
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done
	if [[ -z $cmd ]]; then
		words="$(_corral_commands "$bin") --help --version"
		COMPREPLY=($(compgen -W "$words" -- "$cur"))
		return
	fi
	# After `--` in new/wrap the rest is the agent's command line.
	for ((i = i + 1; i < COMP_CWORD; i++)); do
		if [[ ${COMP_WORDS[i]} == -- ]]; then
			COMPREPLY=($(compgen -c -- "$cur"))
			return
		fi
	done
	case $prev in
	--sandbox)
		COMPREPLY=($(compgen -W "bwrap trusted_local command" -- "$cur"))
		return ;;
	--until)
		COMPREPLY=($(compgen -W "starting working prompt blocked done failed cancelled" -- "$cur"))
		return ;;
	--repo)
		COMPREPLY=($(compgen -d -- "$cur"))
		return ;;
	--policy|--prompt-file)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	--base|--name|--agent|--into|--hunks|--since|--older-than|--timeout|--theme)
		return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_corral_options "$bin" "$cmd") --help" -- "$cur"))
		return
	fi
	case $cmd in
	report)
		COMPREPLY=($(compgen -W "working prompt blocked done failed" -- "$cur")) ;;
	attach|show|screen|send|cancel|review|apply|reject|explain|wait|gc)
		# Only the first operand is an ID.
		local n=0
		for ((i = 1; i < COMP_CWORD; i++)); do
			case ${COMP_WORDS[i]} in -*) continue ;; esac
			case ${COMP_WORDS[i-1]} in
			--into|--hunks|--until|--timeout|--older-than) ;;
			*) n=$((n + 1)) ;;
			esac
		done
		((n == 1)) && COMPREPLY=($(compgen -W "$(_corral_ids "$bin")" -- "$cur")) ;;
	esac
}
complete -F _corral corral
