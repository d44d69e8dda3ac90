#!/usr/bin/env bash
# generic.sh: the generic profile (agents/generic.sandbox, `--agent
# generic`: any other CLI) through corral, sandboxed under the default
# policy with no policy or rules file of the operator's, against our own
# model API on loopback (mock_model.py): the one setting is the generic
# profile's endpoint in corral's config. The CLI is a small agent of our
# own (mini_agent.py: it reads OPENAI_BASE_URL and OPENAI_API_KEY, as
# most such CLIs do), installed outside /usr so its installation is found
# in PATH and mounted as the profile says. The whole session of every
# shipped profile (lib.bash, agent_session): its prompt, a plain answer,
# a slow one (working), a command that waits on its permission question
# (generic.rules: "[y/N]"), the answer, an API error, exit; the result is
# exactly the edit; no process of the lease survives. Again with
# --prompt-file.
set -u
. "$CORRAL_SRC/tests/agents/lib.bash"
mkdir -p "$TMP/mini/bin"
install -m 0755 "$CORRAL_SRC/tests/agents/mini_agent.py" "$TMP/mini/bin/mini-agent"
agent_setup generic mini-agent "$TMP/mini/bin"
PROMPT_TEXT='mini>'
FIRST_RUN='is not set|Traceback'
DIALOG_TEXT='Run shell command?'
APPROVE='y\r'
STREAM_TEXT='A slow answer from'
ERROR_TEXT='the model API answered 400'
NEW_OPTS='--agent generic'
# named with --agent, not identified: the profile `corral new` resolved
profile_is() {
	[ "$(jq -r .profile "$CORRAL_STATE_DIR/leases/$1/agent.json")" = generic ]
}

id=$(cd "$TMP/repo" && "$CORRAL" new --agent generic -- mini-agent 2>"$TMP/new.err")
check "corral new --agent generic -- mini-agent starts a lease" valid_id "$id"
[ -n "$id" ] || { cat "$TMP/new.err"; finish; exit 1; }
check "... sandboxed with bwrap" jq_eq "$(js "$id")" \
	'"\(.mode) \(.adapter)"' "sandboxed bwrap"
check "... its endpoint set for it (OPENAI_BASE_URL)" wait_screen "$id" 'a small agent' 60
agent_session "$id"
prompt_file_session mini-agent
finish
