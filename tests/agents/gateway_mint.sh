#!/usr/bin/env bash
# gateway_mint.sh: the model gateway fed by the operator's mint hook, and
# its upstream connection kept alive (issue 19; SPEC 8.5, 10). The
# operator's [provider anthropic] names the mock model over TLS (a CA made
# here) with no key_file; credentials.ini's mint hook makes the lease's
# key (a canary) and its revoke hook records what it revokes. Checked from
# the host side: the gateway takes the minted key (key_source minted, its
# fingerprint), the upstream sees it as x-api-key on every request, the
# zone has the placeholder and not the key (no process's environment or
# command line, no file of the zone: the minted credential is not bound
# in); two requests the agent makes on one connection reach the upstream
# on one TLS connection (the mock logs each request's peer port), both
# answered and metered; at the end the key is revoked, and it is nowhere
# in the state directory but the lease's own 0600 credential file, which
# is gone once revoked. `corral doctor --agent` says where the key comes
# from and fails on a key it could not use.
set -u
. "$CORRAL_SRC/tests/agents/lib.bash"
bin=$AGENTS/claude-code/node_modules/.bin
[ -x "$bin/claude" ] || { echo "claude-code is not installed in $AGENTS"; exit 1; }
export PATH="$bin:$PATH"
PLACEHOLDER=sk-ant-corral-placeholder-key
export MOCK_KEEP_ALIVE=1	# a whole answer keeps its connection open
gateway_setup anthropic sk-ant
printf 'date = 2026-01-01\nclaude- 1.00 2.00 0 0\n' >"$XDG_CONFIG_HOME/corral/prices"
# No key file: the mint hook gives the gateway its key.
rm -f "$XDG_CONFIG_HOME/corral/anthropic.key"
printf '[provider anthropic]\nupstream = https://127.0.0.1:%s\nca_file = %s\n' \
	"$MOCK_PORT" "$TMP/corral-test-ca.pem" >"$XDG_CONFIG_HOME/corral/config"
CANARY="sk-ant-minted-canary-$(od -An -tx1 -N12 /dev/urandom | tr -d ' \n')"
cat >"$TMP/mint" <<EOF
#!/bin/sh
echo "\$1" >>"$TMP/minted.log"
echo "$CANARY"
EOF
cat >"$TMP/revoke" <<EOF
#!/bin/sh
echo "\$1" >>"$TMP/revoked.log"
EOF
chmod 0755 "$TMP/mint" "$TMP/revoke"
printf '[credentials]\nmint = %s\nrevoke = %s\nvariable = ANTHROPIC_API_KEY\n' \
	"$TMP/mint" "$TMP/revoke" >"$XDG_CONFIG_HOME/corral/credentials.ini"

# corral doctor --agent says how the gateway would get its key.
d=$("$CORRAL" doctor --agent claude-code --json 2>/dev/null)
check "doctor --agent: the gateway, its key minted, its CA" jq_eq "$d" \
	'.agent.gateway | "\(.ok) \(.provider) \(.key_source) \(.ca_file)"' \
	"true anthropic minted $TMP/corral-test-ca.pem"
mv "$XDG_CONFIG_HOME/corral/credentials.ini" "$TMP/credentials.ini"
check "... and with no key file and no mint hook, it fails saying so" bash -c \
	'! "$1" doctor --agent claude-code >"$2" 2>&1 && grep -q "no key_file and no mint hook" "$2"' \
	_ "$CORRAL" "$TMP/doctor.out"
( umask 022; echo sk-ant-other >"$TMP/open.key" )
printf 'key_file = %s\n' "$TMP/open.key" >>"$XDG_CONFIG_HOME/corral/config"
check "... a key file others may read: it fails, naming it" bash -c \
	'! "$1" doctor --agent claude-code >"$2" 2>&1 && grep -q "open.key: must be a regular file" "$2"' \
	_ "$CORRAL" "$TMP/doctor.out"
printf '[provider anthropic]\nupstream = https://127.0.0.1:%s\nca_file = %s\n' \
	"$MOCK_PORT" "$TMP/corral-test-ca.pem" >"$XDG_CONFIG_HOME/corral/config"
mv "$TMP/credentials.ini" "$XDG_CONFIG_HOME/corral/credentials.ini"

id=$(cd "$TMP/repo" && c new --agent claude-code -- sleep 600 2>"$TMP/new.err")
check "a lease of a minted key starts" valid_id "$id"
[ -n "$id" ] || { cat "$TMP/new.err"; finish; exit 1; }
check "the mint hook made its key" poll has_receipt "$id" credential_minted true
check "... for this lease" grep -qx "$id" "$TMP/minted.log"
fp=$(printf '%s' "$CANARY" | sha256sum | cut -d' ' -f1)
check "the gateway took the minted key (its fingerprint)" poll has_receipt "$id" \
	model_gateway ".fields.key_source == \"minted\" and .fields.key_fingerprint == \"$fp\""
# zone: a process of the lease's zone once its gateway's socket is there
zone=
for _ in $(seq 50); do
	uid=$(js "$id" | jq -r '[.receipts[] | select(.kind == "sandbox")][0].fields.uid')
	if [ -n "$uid" ] && [ "$uid" != null ]; then
		for p in $(uid_procs "$uid"); do
			[ -S "/proc/$p/root/run/egress/gateway.sock" ] && zone=$p
		done
	fi
	[ -n "$zone" ] && break
	sleep 0.2
done
check "its zone runs, with the gateway's socket" test -S "/proc/$zone/root/run/egress/gateway.sock"
canary_in_zone "$id"
check "... and the minted key is not bound into the zone" \
	test ! -e "/proc/$zone/root/run/corral/credential"
check "... nor in any file of its HOME" bash -c '! grep -rlaF -- "$1" "$2"' _ \
	"$CANARY" "/proc/$zone/root/home/sbx"

# Two requests on one connection of the agent's.
req='{"model":"claude-test","max_tokens":9,"messages":[{"role":"user","content":"hello"}]}'
n0=$(mock_n)
codes=$(curl -s --unix-socket "/proc/$zone/root/run/egress/gateway.sock" \
	-H 'content-type: application/json' -d "$req" -o "$TMP/a1" -o "$TMP/a2" \
	-w '%{http_code} %{num_connects}\n' http://gw/v1/messages http://gw/v1/messages)
check "two requests on one connection: both 200, the second on the first's connection" \
	test "$(echo $codes)" = "200 1 200 0"
check "... both answered" jq -e '.type == "message" and .stop_reason == "end_turn"' "$TMP/a2"
check "... both reached the upstream" test "$(mock_n)" = "$((n0 + 2))"
check "... with the minted key as x-api-key" test "$(jq -s --arg k "$CANARY" --argjson n "$n0" \
	'[.[] | select(.method != null)][$n:] | map(select(.x_api_key == $k)) | length' \
	"$TMP/mock.log")" = 2
check "... on one TLS connection (one peer port)" test "$(jq -s --argjson n "$n0" \
	'[.[] | select(.method != null)][$n:] | map(.peer) | unique | length' \
	"$TMP/mock.log")" = 1
check "... which the gateway records as one connection's requests 1 and 2" poll bash -c \
	'[ "$("$1" show "$2" --json | jq -c "[.receipts[] | select(.kind == \"model_request\" and
	.fields.verdict == \"done\") | .fields.request] | sort")" = "[1,2]" ]' _ "$CORRAL" "$id"
check "... both metered" jq_eq "$(js "$id")" '.usage | "\(.requests) \(.input) \(.output)"' \
	"2 20 10"
c cancel "$id" >/dev/null
c wait "$id" --until done,failed,cancelled,result_ready --timeout 120 >/dev/null
check "the gateway's summary: one connection, two requests" poll has_receipt "$id" \
	model_gateway_summary '.fields.connections == 1 and .fields.requests == 2'
check "the minted key is revoked at the end" poll has_receipt "$id" credential_revoked true
check "... by the revoke hook, for this lease" grep -qx "$id" "$TMP/revoked.log"
poll has_receipt "$id" teardown true
nothing_survives "$id"
check "the key is nowhere in the state directory" \
	bash -c '! grep -rlaF -- "$1" "$2"' _ "$CANARY" "$CORRAL_STATE_DIR"
check "... nor in anything corral printed" bash -c '! grep -qaF -- "$1" "$2"' _ \
	"$CANARY" "$OUT"
finish
