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
# survives. The same once more with --prompt-file. With
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
finish
