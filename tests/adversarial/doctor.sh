#!/usr/bin/env bash
# doctor.sh: `corral doctor --adversarial` as CTest runs it (SPEC 8.7): the
# preflight, then the whole adversarial suite (run.sh) through real leases;
# when it passes, this configuration is recorded as verified, so `doctor`
# says so and a new lease is labelled `bwrap`, no longer `bwrap unverified`.
set -u
CORRAL=${CORRAL_BIN:?CORRAL_BIN must name the corral binary}
TMP=$(mktemp -d "${TMPDIR:-/tmp}"/corral-doctor.XXXXXX)
export CORRAL_STATE_DIR=$TMP/state XDG_CONFIG_HOME=$TMP/config
export CORRAL_DATA_DIR=${CORRAL_DATA_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
FAIL=0
cleanup() {
	grep -F " $TMP/" /proc/self/mountinfo | awk '{print $5}' | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT
say() { if [ "$1" = 0 ]; then echo "ok    doctor         $2"; else echo "FAIL  doctor         $2"; FAIL=$((FAIL + 1)); fi; }

label() { # the isolation label of a fresh lease in a small repository
	local id
	git init -q "$TMP/repo.$1" && git -C "$TMP/repo.$1" -c user.email=d@x -c user.name=d \
		commit -q --allow-empty -m base
	id=$(cd "$TMP/repo.$1" && "$CORRAL" new -- /bin/true) || return 1
	"$CORRAL" wait "$id" --until result_ready,failed --timeout 30 >/dev/null 2>&1
	"$CORRAL" show "$id" --json | jq -r .isolation
}

[ "$(label before)" = "bwrap unverified" ]; say $? "before: a lease is labelled 'bwrap unverified'"
"$CORRAL" doctor --adversarial; rc=$?
say "$rc" "corral doctor --adversarial exits 0"
"$CORRAL" doctor | grep -q "^configuration    verified"; say $? "doctor now reports this configuration verified"
[ "$(label after)" = "bwrap" ]; say $? "after: a new lease is labelled 'bwrap'"
echo "doctor: $FAIL failed"
[ "$FAIL" -eq 0 ]
