#!/usr/bin/env bash
# doctor.sh: `corral doctor --agent NAME` says whether that agent can run
# sandboxed here and why not (issue 18): not installed (with how to
# install it, also from an operator's own profile), its runtime not
# found, no model endpoint configured (the egress check, exit 30), and
# all of it when it can (its command, installation, mount, endpoint).
# Uses the CLIs
# agents/install put in the build tree.
set -u
. "$CORRAL_SRC/tests/agents/lib.bash"
CC=$AGENTS/claude-code/node_modules/.bin
CX=$AGENTS/codex/node_modules/.bin
[ -x "$CC/claude" ] && [ -x "$CX/codex" ] || { echo "agents not installed"; exit 1; }
doc() { "$CORRAL" doctor "$@" 2>&1; }

expect_rc 2 "an unknown profile is a usage error" "$CORRAL" doctor --agent nope
out=$(PATH=/usr/bin:/bin doc --agent claude); rc=$?
check "claude not in PATH: exit 1" test "$rc" = 1
check "... named agent_not_installed" grep -q "agent_not_installed: 'claude' is not installed" <<<"$out"
# An operator's own profile (how an agent corral does not ship is run): a
# pip program, not installed, and the profile's own hint for it.
mkdir -p "$XDG_CONFIG_HOME/corral/agents"
printf '[agent]\ncommands = mytool\nendpoints = api.openai.com:443\n' \
	>"$XDG_CONFIG_HOME/corral/agents/mytool.rules"
printf '[install]\ncommand = mytool\nroot = venvs\nruntime = python3\nhint = install it with pipx (pipx install mytool)\n[model]\nbase_url_env = OPENAI_API_BASE\nkey_env = OPENAI_API_KEY\nplaceholder = sk-corral-placeholder\n' \
	>"$XDG_CONFIG_HOME/corral/agents/mytool.sandbox"
out=$(PATH=/usr/bin:/bin doc --agent mytool); rc=$?
check "an operator's profile, its program not installed: exit 1, with its hint" \
	test "$rc" = 1 -a -n "$(grep 'pipx install mytool' <<<"$out")"
out=$(PATH=$CX doc --agent codex); rc=$?
check "codex found but not node: agent_runtime_not_found" \
	test "$rc" = 1 -a -n "$(grep "agent_runtime_not_found: its runtime 'node'" <<<"$out")"
out=$(PATH=$CC:$PATH doc --agent claude); rc=$?
check "claude installed, no endpoint configured: exit 30" test "$rc" = 30
check "... saying what to configure" grep -qF '[agent claude-code] endpoint = URL' <<<"$out"
check "... and its installation, mounted read-only" \
	grep -qE "mounted +$AGENTS/claude-code/node_modules\$" <<<"$out"
mkdir -p "$XDG_CONFIG_HOME/corral"
printf '[agent claude-code]\nendpoint = http://127.0.0.1:9\n' >"$XDG_CONFIG_HOME/corral/config"
out=$(PATH=$CC:$PATH doc --agent claude); rc=$?
check "with its endpoint configured it can run: exit 0" test "$rc" = 0
check "... showing the endpoint" grep -qE 'endpoint +http://127.0.0.1:9$' <<<"$out"
js=$(PATH=$CC:$PATH "$CORRAL" doctor --agent claude --json)
check "--json: the agent's status and mount" jq_eq "$js" \
	'"\(.agent.status) \(.agent.install)"' "ok $AGENTS/claude-code/node_modules"
printf '[agent claude-code]\nendpoint = http://10.0.0.1:9\n' >"$XDG_CONFIG_HOME/corral/config"
out=$(PATH=$CC:$PATH doc --agent claude); rc=$?
check "a plain-http endpoint off loopback is refused" \
	test "$rc" = 1 -a -n "$(grep 'agent_endpoint_invalid' <<<"$out")"
out=$(doc --agent generic); rc=$?
check "the generic profile runs the lease's command: it names none itself" \
	test "$rc" = 1 -a -n "$(grep 'names no command' <<<"$out")"
finish
