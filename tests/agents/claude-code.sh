#!/usr/bin/env bash
# claude-code.sh: the real Claude Code CLI (pinned in versions.txt,
# installed into the build tree by install.sh) through corral, sandboxed
# under the default policy with no policy or rules file of the operator's,
# against our own model API on loopback (mock_model.py): the one setting
# is its model endpoint in corral's config. A whole session: its prompt
# with no first-run dialog, a plain answer, an edit that waits on the
# permission dialog, working, the answer, an API error, exit; the result is
# exactly the edit and passes the gate; nothing of its HOME is in it; no
# process of the lease survives. The same once more with --prompt-file.
# With CORRAL_RECORD_SCREENS=DIR the screens of each state are saved there
# (tests/fixtures/agent-screens is what they were recorded into).
set -u
. "$CORRAL_SRC/tests/agents/lib.bash"
agent_setup claude-code claude

id=$(cd "$TMP/repo" && "$CORRAL" new --name cc -- claude 2>"$TMP/new.err")
check "corral new -- claude starts a lease" valid_id "$id"
[ -n "$id" ] || { cat "$TMP/new.err"; finish; exit 1; }
check "... sandboxed with bwrap" jq_eq "$(js "$id")" '"\(.mode) \(.adapter)"' \
	"sandboxed bwrap"
check "it reaches its prompt" wait_activity "$id" prompt 90
check "... identified as claude-code" has_receipt "$id" agent \
	'.fields.detail == "identified as claude-code"'
check "... showing its input box" wait_screen "$id" '? for shortcuts' 30
screen_ok "with no first-run dialog" "$id" \
	'trust|API key|Choose the text style|Select login|Unable to connect|onboarding'
record "$id" prompt

# A plain answer.
ask "$id" 'say hello'
check "a plain answer comes back" wait_screen "$id" 'Hello from the mock model.' 60
check "... and it is at its prompt again" wait_activity "$id" prompt 60

# A slow answer: working while it streams.
ask "$id" 'CORRAL-SLOW please'
check "while the answer streams: working" wait_activity "$id" working 30
check "... under its spinner" wait_screen "$id" 'esc to interrupt' 10
record "$id" working
check "... then the answer, at its prompt" wait_screen "$id" 'ending here.' 60
wait_activity "$id" prompt 60

# An edit: the Write tool asks first.
ask "$id" 'Please CORRAL-EDIT the file'
check "the edit waits on the permission dialog: blocked" wait_activity "$id" blocked 60
check "... which asks to create the file" wait_screen "$id" \
	'Do you want to create corral-edit.txt?' 10
record "$id" blocked
"$CORRAL" send "$id" '1' >/dev/null
check "approved, it writes and answers" wait_screen "$id" 'Edit done.' 60
check "... working after the dialog" activity_after "$id" blocked working
check "... then at its prompt" wait_activity "$id" prompt 60
record "$id" prompt-answered

# An API error is shown and the agent stays usable.
ask "$id" 'now CORRAL-ERROR'
check "an API error is shown" wait_screen "$id" 'API Error' 60
check "... and it is at its prompt again" wait_activity "$id" prompt 60
record "$id" prompt-error

"$CORRAL" send "$id" '/exit' >/dev/null
wait_screen "$id" '/exit' 10
"$CORRAL" send "$id" '\r' >/dev/null
check "/exit ends it: done" wait_activity "$id" done 60
"$CORRAL" wait "$id" --until result_ready,failed --timeout 120 >/dev/null
check "its result is ready (it passed the gate)" jq_eq "$(js "$id")" .lease_state \
	result_ready
result_is_the_edit "$id"
no_violation "$id"
check "its background destinations were refused and recorded" has_receipt "$id" \
	egress '.fields.action == "refused (background)"'
check "the model requests reached the mock" \
	test "$(jq -s '[.[] | select(.api == "anthropic")] | length' "$TMP/mock.log")" -ge 4
nothing_survives "$id"

# --- the same with --prompt-file ------------------------------------------------
printf 'Please CORRAL-EDIT the file\n' >"$TMP/prompt.txt"
id2=$(cd "$TMP/repo" && "$CORRAL" new --prompt-file "$TMP/prompt.txt" -- claude)
check "--prompt-file: the prompt is sent and the edit waits: blocked" \
	wait_activity "$id2" blocked 120
"$CORRAL" send "$id2" '1' >/dev/null
check "... approved, it answers" wait_screen "$id2" 'Edit done.' 60
wait_activity "$id2" prompt 60
"$CORRAL" send "$id2" '/exit' >/dev/null
wait_screen "$id2" '/exit' 10
"$CORRAL" send "$id2" '\r' >/dev/null
"$CORRAL" wait "$id2" --until result_ready,failed --timeout 120 >/dev/null
check "... its result is ready" jq_eq "$(js "$id2")" .lease_state result_ready
result_is_the_edit "$id2"
nothing_survives "$id2"
finish
