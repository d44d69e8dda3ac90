#!/usr/bin/env bash
# gateway_codex.sh: the real Codex CLI through the lease's model gateway
# (issue 19; SPEC 8.5), the OpenAI side: [provider openai] names the
# mock model over TLS (a CA made here), the key file a canary key. A plain
# answer through the gateway; every Responses request reached the upstream
# with the canary as its Bearer token, never the placeholder; the canary
# is in no zone process's environment or command line, no file of the
# workspace, nor anything corral keeps or printed; each answer is metered
# with the mock's tokens; a path outside the OpenAI API is refused. The
# generic profile's CLI (mini_agent.py) through the same gateway: its
# OPENAI_BASE_URL ends in /v1 as OpenAI's SDKs expect, so its Responses
# and chat completions paths are the API's.
set -u
. "$CORRAL_SRC/tests/agents/lib.bash"
bin=$AGENTS/codex/node_modules/.bin
[ -x "$bin/codex" ] || { echo "codex is not installed in $AGENTS"; exit 1; }
export PATH="$bin:$PATH"
PLACEHOLDER=sk-corral-placeholder-key
gateway_setup openai sk
printf 'date = 2026-01-01\ngpt- 1.00 2.00 0 0\n' >"$XDG_CONFIG_HOME/corral/prices"

id=$(cd "$TMP/repo" && c new -- codex 2>"$TMP/new.err")
check "corral new -- codex starts a lease" valid_id "$id"
[ -n "$id" ] || { cat "$TMP/new.err"; finish; exit 1; }
check "its gateway started: openai, the key from the key file" poll has_receipt "$id" \
	model_gateway '.fields.provider == "openai" and .fields.key_source == "key_file"'
check "it reaches its prompt" wait_activity "$id" prompt 90
check "... showing its input prompt" wait_screen "$id" 'Ask Codex to do anything' 30
ask "$id" 'say hello'
check "a plain answer comes back through the gateway" \
	wait_screen "$id" 'Hello from the mock model.' 60
check "... and it is at its prompt again" wait_activity "$id" prompt 60
canary_in_zone "$id"
ws=$(js "$id" | jq -r '[.receipts[] | select(.kind == "sandbox")][0].fields.workspace')
check "the canary is in no file of the workspace" bash -c '! grep -rlaF -- "$1" "$2"' _ "$CANARY" "$ws"
check "Responses requests reached the upstream" test "$(jq -s \
	'[.[] | select(.api == "openai")] | length' "$TMP/mock.log")" -ge 1
check "... every request with the real key as its Bearer token" test "$(jq -s \
	--arg k "Bearer $CANARY" '[.[] | select(.method != null and .authorization != $k)] | length' \
	"$TMP/mock.log")" = 0
check "... none with the placeholder" bash -c '! grep -qF -- "$1" "$2"' _ \
	"$PLACEHOLDER" "$TMP/mock.log"
p=$(zone_pid "$id" codex)
body=$(curl -s --unix-socket "/proc/$p/root/run/egress/gateway.sock" -X POST \
	-w '\n%{http_code}' http://gw/v1/files -d '{}')
check "POST /v1/files is refused: 403, a JSON error body" test \
	"$(echo "$body" | tail -1) $(echo "$body" | head -1 | jq -r .error.type)" = \
	"403 permission_error"
agent_exit "$id"
wait_activity "$id" done 60
c wait "$id" --until result_ready,failed --timeout 120 >/dev/null
r=$(js "$id")
echo "$r" >>"$OUT"
nmock=$(jq -s '[.[] | select(.api == "openai")] | length' "$TMP/mock.log")
check "metered: one receipt per Responses request, 10 in, 5 out, 0.000020 USD" \
	test "$(echo "$r" | jq '[.receipts[] | select(.kind == "model_request" and
	.fields.path == "/v1/responses" and .fields.usage.input == 10 and
	.fields.usage.output == 5 and .fields.cost_usd == "0.000020" and
	.fields.stop_reason == "completed")] | length')" = "$nmock"
check "corral usage agrees" jq_eq "$(c usage "$id" --json)" \
	'"\(.total.requests) \(.total.input) \(.total.output)"' \
	"$nmock $((10 * nmock)) $((5 * nmock))"
nothing_survives "$id"

# The generic profile through the gateway.
mkdir -p "$TMP/mini/bin"
install -m 0755 "$CORRAL_SRC/tests/agents/mini_agent.py" "$TMP/mini/bin/mini-agent"
export PATH="$TMP/mini/bin:$PATH"
n0=$(mock_n)
idg=$(cd "$TMP/repo" && c new --agent generic -- mini-agent 2>"$TMP/newg.err")
check "corral new --agent generic -- mini-agent starts a lease" valid_id "$idg"
check "... its gateway started" poll has_receipt "$idg" model_gateway \
	'.fields.provider == "openai"'
check "... the agent at its prompt" wait_screen "$idg" 'mini>' 60
pg=$(zone_pid "$idg" mini-agent | tail -1)
check "its OPENAI_BASE_URL is the gateway's, with /v1" bash -c 'tr "\0" "\n" \
	<"/proc/$1/environ" | grep -qx "OPENAI_BASE_URL=http://127.0.0.1:3129/v1"' _ "$pg"
ask "$idg" 'say hello'
check "a plain answer comes back through the gateway" \
	wait_screen "$idg" 'Hello from the mock model.' 60
check "... its request was the API's /v1/responses, answered and metered" poll \
	has_receipt "$idg" model_request '.fields.path == "/v1/responses" and
	.fields.verdict == "done" and .fields.usage.input == 10'
check "... and reached the upstream as such" test "$(jq -s --argjson n "$n0" \
	'[.[] | select(.method != null)][$n:] | map(select(.path == "/v1/responses")) |
	length' "$TMP/mock.log")" -ge 1
code=$(curl -s --unix-socket "/proc/$pg/root/run/egress/gateway.sock" -o /dev/null \
	-w '%{http_code}' -H 'content-type: application/json' \
	http://gw/v1/chat/completions -d '{"model":"gpt-x","messages":[]}')
check "chat completions under /v1 go through (not refused: $code)" test "$code" != 403
check "... to the upstream" test "$(jq -s '[.[] | select(.path == "/v1/chat/completions")] |
	length' "$TMP/mock.log")" = 1
agent_exit "$idg"
wait_activity "$idg" done 60
c wait "$idg" --until result_ready,failed --timeout 120 >/dev/null
nothing_survives "$idg"
check "the canary is nowhere in the state directory" \
	bash -c '! grep -rlaF -- "$1" "$2"' _ "$CANARY" "$CORRAL_STATE_DIR"
check "... nor in anything corral printed" bash -c '! grep -qaF -- "$1" "$2"' _ \
	"$CANARY" "$OUT"
finish
