#!/usr/bin/env bash
# codex-first-run.sh: the real Codex CLI (versions.txt) on its first run
# in a folder: its config.toml names the model provider but does not
# trust /work, so it asks first (issue 20). The dialog is blocked, asked
# as data (ls --json question), refused under another question's digest,
# answered with `corral answer` and receipted; then the edit's approval
# the same way, by its own key. With CORRAL_RECORD_SCREENS=DIR each
# dialog's screen is saved there
# (tests/fixtures/agent-screens/codex/blocked-*.screen).
set -u
. "$CORRAL_SRC/tests/agents/lib.bash"
agent_setup codex codex
PROMPT_TEXT='Ask Codex to do anything'
DIALOG_TEXT='Would you like to run the following command?'
APPROVE_OPTION=y
FIRST_RUN_HOME=config.toml
FIRST_RUN_SEED=$(sed '/^\[projects/,$d' "$CORRAL_SRC/agents/codex.home/config.toml")
FIRST_DIALOGS='trust|Trust this folder?|1'

first_run_session codex
SAMPLE_TAG=-first-run sample_score
finish
