#!/bin/bash
# completion.sh: the bash completion (completion/corral.bash, issue 9 item 6)
# driven as bash drives it (COMP_WORDS/COMP_CWORD), against the real binary
# and a real trusted_local lease: commands, per-command options from the
# command table, lease IDs, fixed value lists and the agent command after --.
. "$(dirname "$0")/lib.bash"
SRC=${CORRAL_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/completion/corral.bash"

# complete WORD...: the completions of the last word, one per line, sorted.
complete_words() {
	COMP_WORDS=("$CORRAL" "$@")
	COMP_CWORD=$#
	COMPREPLY=()
	_corral
	printf '%s\n' "${COMPREPLY[@]}" | sort
}
has() { grep -qx -- "$2" <<<"$1"; }

out=$(complete_words "")
check "every command of the table is offered" \
	bash -c '[ "$(printf "%s\n" "$0" | grep -c .)" -ge 20 ]' "$out"
for w in new wrap ls show review apply reject doctor reconcile gc demo attach; do
	has "$out" "$w" && pass "command $w" || fail "command $w missing"
done
has "$out" "__holder" && fail "internal __holder offered" || pass "internal __holder hidden"

out=$(complete_words re)
[ "$out" = "$(printf 'reconcile\nreject\nreport\nreview')" ] &&
	pass "prefix re" || fail "prefix re: $out"

out=$(complete_words new --)
for o in --repo --base --sandbox --policy --agent --name --prompt-file --allow-control --help; do
	has "$out" "$o" && pass "new option $o" || fail "new option $o missing: $out"
done
# Options come from the binary's own usage line, so they match the code.
want=$("$CORRAL" new --help | sed -n '1s/^usage: //p' | grep -o -- '--[a-z][a-z-]*' | sort -u)
for o in $want; do has "$out" "$o" || fail "usage option $o not offered"; done

out=$(complete_words new --sandbox "")
[ "$out" = "$(printf 'bwrap\ncommand\ntrusted_local')" ] &&
	pass "--sandbox values" || fail "--sandbox values: $out"
out=$(complete_words wait X --until bl)
[ "$out" = blocked ] && pass "--until values" || fail "--until: $out"
out=$(complete_words report d)
[ "$out" = done ] && pass "report states" || fail "report: $out"
out=$(complete_words new -- ech)
has "$out" echo && pass "agent command after --" || fail "after --: $out"

id=$("$CORRAL" new --sandbox trusted_local --name compl -- sleep 60)
valid_id "$id" && pass "lease started" || fail "lease: $id"
out=$(complete_words show "")
[ "$out" = "$id" ] && pass "show completes the lease ID" || fail "show IDs: $out"
out=$(complete_words cancel "${id:0:8}")
[ "$out" = "$id" ] && pass "ID prefix" || fail "ID prefix: $out"
out=$(complete_words send "$id" "")
[ -z "$out" ] && pass "only the first operand is an ID" || fail "send 2nd: $out"
"$CORRAL" cancel "$id" >/dev/null 2>&1
finish
