#!/usr/bin/env bash
# gateway.sh: the real Claude Code CLI through the lease's model gateway
# (issue 19; SPEC 8.5), sandboxed under the default policy. The upstream
# is our mock model API over TLS on loopback, its certificate signed by a
# CA made here with the openssl CLI; the operator's config names it once
# ([provider anthropic] upstream, key_file, ca_file) and the key file holds
# a canary key. Checked from the host side: every request reached the
# upstream with the canary as its x-api-key; the canary is nowhere in the
# zone (no process's environment or command line, no file of the
# workspace or HOME), nor in the state directory (transcript, receipts)
# or anything corral printed; the zone holds the placeholder; the zone
# has no route to the upstream itself; every answer is metered with
# exactly the tokens the mock sent; a malformed usage block is recorded
# as unparseable; a method or path outside the API is refused with a
# JSON error body and a receipt; with another CA the upstream's
# certificate fails verification (a 502 naming it, nothing reaches the
# mock). Metering: each request's cost by the operator's price table,
# `corral usage` sums exactly the mock's tokens; the spend cap fails
# closed (the request after the cap is crossed is held with an error
# body and a receipt, as is the one after an answer of unknown usage)
# until `corral budget` raises it.
# The holder writes its receipts off its loop, so a check on one waits
# for it (poll): the answer can reach curl before its receipt is written.
set -u
. "$CORRAL_SRC/tests/agents/lib.bash"
bin=$AGENTS/claude-code/node_modules/.bin
[ -x "$bin/claude" ] || { echo "claude-code is not installed in $AGENTS"; exit 1; }
export PATH="$bin:$PATH"
PLACEHOLDER=sk-ant-corral-placeholder-key
gateway_setup anthropic sk-ant
# config CA-FILE: the operator's one section
config() { gateway_config "$@"; }
# The operator's price table: every claude- model at 1 USD per million
# input tokens and 2 per million output tokens (10 in, 5 out: 0.000020).
printf 'date = 2026-01-01\nclaude- 1.00 2.00 0 0\n' >"$XDG_CONFIG_HOME/corral/prices"

id=$(cd "$TMP/repo" && c new -- claude 2>"$TMP/new.err")
check "corral new -- claude starts a lease" valid_id "$id"
[ -n "$id" ] || { cat "$TMP/new.err"; finish; exit 1; }
check "... sandboxed with bwrap" jq_eq "$(js "$id")" \
	'"\(.mode) \(.adapter)"' "sandboxed bwrap"
check "its gateway started, the key from the key file" poll has_receipt "$id" \
	model_gateway '.fields.key_source == "key_file" and .fields.provider == "anthropic"'
check "it reaches its prompt" wait_activity "$id" prompt 90
check "... showing its input prompt" wait_screen "$id" '? for shortcuts' 30
screen_ok "with no first-run dialog or login" "$id" \
	'API key|Select login|Unable to connect|onboarding|Invalid API'

ask "$id" 'say hello'
check "a plain answer comes back through the gateway" \
	wait_screen "$id" 'Hello from the mock model.' 60
check "... and it is at its prompt again" wait_activity "$id" prompt 60

# The zone, from the host: every process of the lease's uid.
uid=$(js "$id" | jq -r '[.receipts[] | select(.kind == "sandbox")][0].fields.uid')
ws=$(js "$id" | jq -r '[.receipts[] | select(.kind == "sandbox")][0].fields.workspace')
pids=$(uid_procs "$uid")
check "the zone runs (uid $uid)" test -n "$pids"
agent_pid=
for p in $pids; do
	tr '\0' '\n' <"/proc/$p/cmdline" 2>/dev/null | grep -q 'claude' && agent_pid=$p
done
check "... the agent among its processes" test -n "$agent_pid"
canary_in_zone "$id"
check "the canary is in no file of the workspace" \
	bash -c '! grep -rlaF -- "$1" "$2"' _ "$CANARY" "$ws"
check "... nor of the zone's HOME" bash -c '! grep -rlaF -- "$1" "$2"' _ \
	"$CANARY" "/proc/$agent_pid/root/home/sbx"
check "... whose files are there to read" test -e "/proc/$agent_pid/root/home/sbx/.claude.json"

# The upstream saw the real key on every request, never the placeholder.
check "requests reached the upstream" test "$(mock_n)" -ge 1
check "... every one with the real key as x-api-key" test "$(jq -s --arg k "$CANARY" \
	'[.[] | select(.method != null and .x_api_key != $k)] | length' "$TMP/mock.log")" = 0
check "... none with the placeholder" bash -c '! grep -qF -- "$1" "$2"' _ \
	"$PLACEHOLDER" "$TMP/mock.log"

# No route from the zone to the upstream: only through the gateway.
n0=$(mock_n)
check "the zone cannot reach the upstream itself" bash -c '! nsenter -t "$1" -n \
	curl -sk --max-time 5 -o /dev/null "https://127.0.0.1:$2/v1/models"' _ \
	"$agent_pid" "$MOCK_PORT"
check "... and nothing of that reached it" test "$(mock_n)" = "$n0"

# A method or path outside the API: refused, with a JSON body and a receipt.
sock=/proc/$agent_pid/root/run/egress/gateway.sock
body=$(curl -s --unix-socket "$sock" -X POST -H 'x-api-key: x' \
	-w '\n%{http_code}' http://gw/v1/files -d '{}')
check "POST /v1/files is refused: 403" test "$(echo "$body" | tail -1)" = 403
check "... with a JSON error body saying why" jq_eq "$(echo "$body" | head -1)" \
	'.error.type' permission_error
body=$(curl -s --unix-socket "$sock" -w '\n%{http_code}' http://gw/v1/messages)
check "GET /v1/messages is refused: 403" test "$(echo "$body" | tail -1)" = 403
check "... both recorded" poll has_receipt "$id" model_request \
	'.fields.verdict == "refused" and .fields.path == "/v1/files"'
check "... and neither reached the upstream" test "$(mock_n)" = "$n0"

# A malformed usage block: the answer goes through, its usage is unknown.
ask "$id" 'CORRAL-BADUSAGE please'
check "an answer with malformed usage still comes back" \
	wait_screen "$id" 'An answer with a malformed usage block.' 60
wait_activity "$id" prompt 60
check "... recorded as usage_unparseable" poll has_receipt "$id" model_request \
	'.fields.usage_unparseable == true'

agent_exit "$id"
check "/exit ends it: done" wait_activity "$id" done 60
c wait "$id" --until result_ready,failed --timeout 120 >/dev/null

# Metering: every answered model request, exactly the mock's tokens.
r=$(js "$id")
echo "$r" >>"$OUT"
nmock=$(jq -s '[.[] | select(.api == "anthropic" and .reply != "badusage")] | length' "$TMP/mock.log")
check "metered: one receipt per model request the mock answered" test "$(echo "$r" |
	jq '[.receipts[] | select(.kind == "model_request" and .fields.verdict == "done"
	and .fields.metered != false and .fields.usage != null and
	.fields.usage_unparseable == false)] | length')" = "$nmock"
check "... each with the mock's tokens (10 in, 5 out) and its model" test "$(echo "$r" |
	jq '[.receipts[] | select(.kind == "model_request" and .fields.usage != null and
	.fields.usage_unparseable == false) | select(.fields.usage.input != 10 or
	.fields.usage.output != 5 or .fields.model == "")] | length')" = 0
check "... and how it stopped (end_turn)" poll has_receipt "$id" model_request \
	'.fields.stop_reason == "end_turn"'
check "... each priced by the operator's table: 0.000020 USD" test "$(echo "$r" |
	jq '[.receipts[] | select(.kind == "model_request" and .fields.usage != null and
	.fields.usage_unparseable == false) | select(.fields.cost_usd != "0.000020")] | length')" = 0
check "... and the one of malformed usage at an unknown cost" poll has_receipt "$id" \
	model_request '.fields.usage_unparseable == true and .fields.cost_usd == null'
check "the gateway's summary counts the refusals" poll has_receipt "$id" \
	model_gateway_summary '.fields.refused >= 2'
u=$(c usage "$id" --json)
check "corral usage: the mock's tokens, every request" jq_eq "$u" \
	'"\(.total.requests) \(.total.input) \(.total.output)"' \
	"$((nmock + 1)) $((10 * nmock)) $((5 * nmock))"
check "... their cost, and one of unknown cost" jq_eq "$u" \
	'"\(.total.cost_usd) \(.total.unknown_cost)"' \
	"$(printf '0.%06d' $((20 * nmock))) 1"
check "... the same in its table, marked +unknown" bash -c '"$1" usage "$2" |
	grep -E "^total .* $(printf "0.%06d" $((20 * $3))) \+unknown$"' _ \
	"$CORRAL" "$id" "$nmock"
# The same totals on the lease row: ls --json, show --json and show.
usd=$(printf '0.%06d' $((20 * nmock)))
sums="$((nmock + 1)) $((10 * nmock)) $((5 * nmock)) $usd"
check "ls --json: the lease's usage, the same totals" jq_eq \
	"$(c ls --all --json)" ".[] | select(.id == \"$id\") | .usage |
	\"\(.requests) \(.input) \(.output) \(.cost_usd) \(.unknown_cost)\"" \
	"$sums 1"
check "... show --json too" jq_eq "$(js "$id")" '.usage |
	"\(.requests) \(.input) \(.output) \(.cost_usd)"' "$sums"
line="^usage +$((nmock + 1)) requests, $((10 * nmock)) tokens in,"
line="$line $((5 * nmock)) out, cache 0 written, 0 read; $usd USD"
line="$line and 1 request of unknown cost\$"
check "... and show's usage line" bash -c '"$1" show "$2" | grep -E "$3"' _ \
	"$CORRAL" "$id" "$line"
nothing_survives "$id"

# The spend cap, on a lease of the profile running a plain program (so
# every model request is the test's): 0.000030 USD.
gateway_config "$TMP/corral-test-ca.pem" 0.000030
id3=$(cd "$TMP/repo" && c new --agent claude-code -- sleep 600 2>"$TMP/new3.err")
check "a capped lease starts" valid_id "$id3"
check "... its gateway says its cap" poll has_receipt "$id3" model_gateway \
	'.fields.spend_cap_usd == "0.000030"'
# zone_gw ID: p3 becomes a process of the lease's zone once its
# gateway's socket is there (10 s at most)
zone_gw() {
	local uid _
	p3=
	for _ in $(seq 50); do
		uid=$(js "$1" | jq -r '[.receipts[] | select(.kind == "sandbox")][0].fields.uid')
		[ -n "$uid" ] && [ "$uid" != null ] && p3=$(uid_procs "$uid" | tail -1)
		[ -n "$p3" ] && [ -S "/proc/$p3/root/run/egress/gateway.sock" ] && return 0
		sleep 0.2
	done
}
zone_gw "$id3"
# ask TEXT: one streamed Messages request through the gateway; its status
ask_gw() {
	curl -s --unix-socket "/proc/$p3/root/run/egress/gateway.sock" \
		-H 'content-type: application/json' -o "$TMP/ans" -w '%{http_code}' \
		http://gw/v1/messages -d "{\"model\":\"claude-test\",\"stream\":true,
		\"max_tokens\":9,\"tools\":[{\"name\":\"Write\"}],
		\"messages\":[{\"role\":\"user\",\"content\":\"$1\"}]}"
}
check "a first request under the cap: 200" test "$(ask_gw hello)" = 200
check "... a second, still under it when it starts: 200" test "$(ask_gw hello)" = 200
check "... which crossed it: the requests are held (spend_cap)" poll has_receipt "$id3" \
	model_requests_held '.fields.reason == "spend_cap" and .fields.spent_usd == "0.000040"'
check "... the lease is blocked: the operator decides" wait_activity "$id3" blocked 30
check "... and explain names the cap" bash -c '"$1" explain "$2" | grep -q "gateway:spend_cap"' \
	_ "$CORRAL" "$id3"
n2=$(mock_n)
check "the next request is refused: 429" test "$(ask_gw hello)" = 429
check "... with an error body that names the cap" jq -e \
	'.error.type == "rate_limit_error" and (.error.message | test("spend_cap"))' "$TMP/ans"
check "... recorded as held" poll has_receipt "$id3" model_request \
	'.fields.verdict == "held" and .fields.error == "spend_cap"'
check "... and it never reached the upstream" test "$(mock_n)" = "$n2"
check "corral budget raises the cap" bash -c '"$1" budget "$2" 0.000100 |
	grep -q "spend cap 0.000100 USD"' _ "$CORRAL" "$id3"
check "... recorded" poll has_receipt "$id3" budget '.fields.cap_usd == "0.000100"'
check "... and the next request goes on: 200" test "$(ask_gw hello)" = 200
check "... the raise recorded by the holder" poll has_receipt "$id3" spend_cap_raised \
	'.fields.cap_usd == "0.000100" and .fields.held_was == "spend_cap"'
check "... and the lease is no longer blocked" poll bash -c '! "$1" explain "$2" |
	grep -q "gateway:"' _ "$CORRAL" "$id3"
# Unknown usage fails closed too.
check "an answer of malformed usage goes through: 200" test "$(ask_gw CORRAL-BADUSAGE)" = 200
check "... and the next request is held (usage_unparseable): 429" test "$(ask_gw hello)" = 429
check "... recorded" poll has_receipt "$id3" model_requests_held '.fields.reason == "usage_unparseable"'
check "... blocked again, explain naming it" poll bash -c '"$1" explain "$2" |
	grep -q "gateway:usage_unparseable"' _ "$CORRAL" "$id3"
c cancel "$id3" >/dev/null
c wait "$id3" --until done,failed,cancelled,result_ready --timeout 120 >/dev/null
# cancelled: its teardown follows the end (journaled off the holder's loop)
poll has_receipt "$id3" teardown true
nothing_survives "$id3"

# A policy may only narrow the cap: the lower one holds (here the lease's
# own policy, under the provider's 0.000030), a higher one is ignored and
# said so (a repository's above the operator's policy is refused: the
# sandbox-adapters/policy suite).
printf '[model]\nspend_cap = 0.000010\n' >"$TMP/cap-low.ini"
id4=$(cd "$TMP/repo" && c new --agent claude-code --policy "$TMP/cap-low.ini" \
	-- sleep 600 2>"$TMP/new4.err")
check "a lease whose policy lowers the cap starts" valid_id "$id4"
check "... its gateway keeps the policy's cap" poll has_receipt "$id4" model_gateway \
	'.fields.spend_cap_usd == "0.000010" and .fields.spend_cap_from == "policy"'
zone_gw "$id4"
check "... a first request: 200 (0.000020 crosses it)" test "$(ask_gw hello)" = 200
check "... the next is held: 429" test "$(ask_gw hello)" = 429
check "... recorded as spend_cap at the policy's cap" poll has_receipt "$id4" \
	model_requests_held '.fields.reason == "spend_cap" and .fields.cap_usd == "0.000010"'
c cancel "$id4" >/dev/null
c wait "$id4" --until done,failed,cancelled,result_ready --timeout 120 >/dev/null
poll has_receipt "$id4" teardown true
printf '[model]\nspend_cap = 0.50\n' >"$TMP/cap-high.ini"
id5=$(cd "$TMP/repo" && c new --agent claude-code --policy "$TMP/cap-high.ini" \
	-- sleep 600 2>"$TMP/new5.err")
check "a lease whose policy names a higher cap starts" valid_id "$id5"
check "... its gateway keeps the operator's" poll has_receipt "$id5" model_gateway \
	'.fields.spend_cap_usd == "0.000030" and .fields.spend_cap_from == "provider" and
	.fields.policy_spend_cap_usd == "0.500000"'
check "... and says the policy's was ignored" poll has_receipt "$id5" \
	policy_spend_cap_ignored '.fields.policy_cap_usd == "0.500000"'
c cancel "$id5" >/dev/null
c wait "$id5" --until done,failed,cancelled,result_ready --timeout 120 >/dev/null
poll has_receipt "$id5" teardown true
nothing_survives "$id4"
nothing_survives "$id5"

# Another CA: the upstream's certificate fails verification.
config "$TMP/corral-other-ca.pem"
id2=$(cd "$TMP/repo" && c new -- claude 2>"$TMP/new2.err")
check "a lease whose gateway trusts another CA starts" valid_id "$id2"
wait_activity "$id2" prompt 90
uid2=$(js "$id2" | jq -r '[.receipts[] | select(.kind == "sandbox")][0].fields.uid')
p2=
for p in $(uid_procs "$uid2"); do
	tr '\0' '\n' <"/proc/$p/cmdline" 2>/dev/null | grep -q 'claude' && p2=$p
done
n1=$(mock_n)
body=$(curl -s --unix-socket "/proc/$p2/root/run/egress/gateway.sock" \
	-X POST -H 'content-type: application/json' -w '\n%{http_code}' \
	http://gw/v1/messages -d '{"model":"m","max_tokens":1,"messages":[]}')
check "with another CA the request fails: 502" test "$(echo "$body" | tail -1)" = 502
check "... naming the certificate's verification" bash -c 'echo "$1" | head -1 |
	jq -e ".error.message | test(\"certificate verify failed\")"' _ "$body"
check "... recorded" poll has_receipt "$id2" model_request \
	'.fields.verdict == "failed" and (.fields.error | test("certificate verify failed"))'
check "... and nothing reached the upstream" test "$(mock_n)" = "$n1"
c cancel "$id2" >/dev/null
c wait "$id2" --until done,failed,cancelled,result_ready --timeout 120 >/dev/null
# cancelled: its teardown follows the end (journaled off the holder's loop)
poll has_receipt "$id2" teardown true
nothing_survives "$id2"

# Nothing corral keeps or printed holds the key.
check "the canary is nowhere in the state directory (transcripts, receipts)" \
	bash -c '! grep -rlaF -- "$1" "$2"' _ "$CANARY" "$CORRAL_STATE_DIR"
check "... nor in anything corral printed" bash -c '! grep -qaF -- "$1" "$2"' _ \
	"$CANARY" "$OUT"
finish
