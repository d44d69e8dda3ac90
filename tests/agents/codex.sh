#!/usr/bin/env bash
# codex.sh: the real Codex CLI (pinned in versions.txt,
# installed into the build tree by install.sh) through corral, sandboxed
# under the default policy with no policy or rules file of the operator's,
# against our own model API on loopback (mock_model.py): the one setting
# is its model endpoint in corral's config. A whole session (lib.bash,
# agent_session): its prompt with no first-run dialog, a plain answer, a
# slow one (working), an edit that waits on the permission dialog, the
# answer, an API error, exit; the result is exactly the edit and passes
# the gate; nothing of its HOME is in it; no process of the lease
# survives (it runs in the foreground: no daemon of its own). The same once more with --prompt-file. With
# CORRAL_RECORD_SCREENS=DIR the screens of each state are saved there
# (tests/fixtures/agent-screens is what they were recorded into).
set -u
. "$CORRAL_SRC/tests/agents/lib.bash"
agent_setup codex codex
PROMPT_TEXT='Ask Codex to do anything'
FIRST_RUN='Trust this folder|Sign in|API key|Welcome to Codex|no-daemon|No space'
DIALOG_TEXT='Would you like to run the following command?'
APPROVE=y
STREAM_TEXT='A slow answer from'
ERROR_TEXT='Mock error'

agent_new codex
prompt_file_session codex
sample_score
finish
