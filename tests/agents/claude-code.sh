#!/usr/bin/env bash
# claude-code.sh: the real Claude Code CLI (pinned in versions.txt,
# installed into the build tree by install.sh) through corral, sandboxed
# under the default policy with no policy or rules file of the operator's,
# against our own model API on loopback (mock_model.py): the one setting
# is its model endpoint in corral's config. A whole session (lib.bash,
# agent_session): its prompt with no first-run dialog, a plain answer, a
# slow one (working), an edit that waits on the permission dialog, the
# answer, an API error, exit; the result is exactly the edit and passes
# the gate; nothing of its HOME is in it; no process of the lease
# survives. The same once more with --prompt-file. Then a command allowed
# for good, whose rule Claude Code writes into the workspace: the profile's
# [workspace] rule leaves it out of the result, which says so. With
# CORRAL_RECORD_SCREENS=DIR the screens of each state are saved there
# (tests/fixtures/agent-screens is what they were recorded into).
set -u
. "$CORRAL_SRC/tests/agents/lib.bash"
agent_setup claude-code claude
PROMPT_TEXT='? for shortcuts'
FIRST_RUN='trust|API key|Choose the text style|Select login|Unable to connect|onboarding'
DIALOG_TEXT='Do you want to create corral-edit.txt?'
APPROVE=1
STREAM_TEXT='to interrupt'
ERROR_TEXT='API Error'

agent_new claude
prompt_file_session claude
sample_score

# Its own state in the workspace: a command allowed for good ("Yes, and
# don't ask again") is written to /work/.claude/settings.local.json by
# Claude Code itself; the profile's [workspace] rule leaves it out of the
# result, which says so, instead of the whole result being refused or
# flagged (the file used to land in the result, flagged "agent").
id=$(cd "$TMP/repo" && "$CORRAL" new -- claude)
check "a third lease starts" wait_activity "$id" prompt 90
ask "$id" 'Please run CORRAL-BASH'
check "its command waits on the permission dialog: blocked" wait_activity "$id" blocked 60
check "... which offers: don't ask again for it" wait_screen "$id" 'ask again for' 10
"$CORRAL" send "$id" 2 >/dev/null
check "allowed for good, it runs and answers" wait_screen "$id" 'Edit done.' 60
wait_activity "$id" prompt 60
agent_exit "$id"
"$CORRAL" wait "$id" --until result_ready,failed --timeout 120 >/dev/null
j=$(js "$id")
check "... its result is ready" jq_eq "$j" .lease_state result_ready
r=$("$CORRAL" review "$id" --json)
check "the result is exactly what the command wrote" jq_eq "$r" \
	'[.manifest.files[] | "\(.status) \(.path)"] | join(",")' "added corral-bash.txt"
check "... with no review flag" jq_eq "$r" '.result.flags | length' 0
check "the agent's settings file was left out, and the result says so" jq_eq "$j" \
	'"\(.result.excluded.entries) \(.result.excluded.patterns | join(" "))"' \
	"1 /.claude/settings.local.json"
check "... in a receipt too" has_receipt "$id" result_excluded '.fields.entries == 1'
check "... and in corral review" bash -c "'$CORRAL' review '$id' | grep -q 'left out: 1 new name'"
nothing_survives "$id"
finish
