#!/usr/bin/env bash
# claude-code-first-run.sh: the real Claude Code CLI (versions.txt) on its
# first run in a folder: its HOME has onboarding done but neither the
# folder trusted nor the key approved, so it asks both first (issue 20).
# Each dialog is blocked, asked as data (ls --json question), refused
# under another question's digest, answered with `corral answer` and
# receipted; then the edit's permission dialog the same way. With
# CORRAL_RECORD_SCREENS=DIR each dialog's screen is saved there
# (tests/fixtures/agent-screens/claude-code/blocked-*.screen).
set -u
. "$CORRAL_SRC/tests/agents/lib.bash"
agent_setup claude-code claude
PROMPT_TEXT='? for shortcuts'
DIALOG_TEXT='Do you want to create corral-edit.txt?'
APPROVE_OPTION=Yes
FIRST_RUN_HOME=claude.json
FIRST_RUN_SEED='{ "hasCompletedOnboarding": true, "numStartups": 1, "autoUpdates": false }'
FIRST_DIALOGS='trust|Yes, I trust this folder|1
api-key|Do you want to use this API key?|Yes'

first_run_session claude
SAMPLE_TAG=-first-run sample_score
finish
