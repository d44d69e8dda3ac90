#!/usr/bin/env bash
# leftovers_planted.sh: make test's leftover check (scripts/leftovers.bash)
# on planted resources: a loop image mounted under the run's directory and
# a cgroup of one of the run's state directories are named; a live state
# directory's cgroup and a loop image outside the run are another corral's
# and are not, nor is one of the host's seen through a view. Real loop devices, mounts and cgroups (root).
set -u
SRC=${CORRAL_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
LOGDIR=$(mktemp -d "${TMPDIR:-/tmp}"/corral-left.XXXXXX)
RUN_TMP=$(mktemp -d "${TMPDIR:-/tmp}"/corral-run.XXXXXX)
O=$(mktemp -d /tmp/corral-other.XXXXXX)
CORRAL_TEST_RUN=planted.$$
CG=/sys/fs/cgroup/pids/corral
fail=0 L= ours= theirs= host=
tag() { printf 'state-%.16s' "$(printf %s "$(realpath "$1")" | sha256sum)"; }
cleanup() {
	mountpoint -q "$RUN_TMP/m" && umount "$RUN_TMP/m"
	[ -n "$L" ] && losetup -d "$L"
	[ -n "$ours" ] && rmdir "$CG/$ours/lease-ours" "$CG/$ours"
	[ -n "$theirs" ] && rmdir "$CG/$theirs/lease-theirs" "$CG/$theirs"
	[ -n "$host" ] && rmdir "$CG/$host/lease-host" "$CG/$host"
	rm -rf "$LOGDIR" "$RUN_TMP" "$O"
}
trap cleanup EXIT
. "$SRC/scripts/leftovers.bash"
[ -d "$CG" ] || mkdir -p "$CG" || { echo "FAIL no pids cgroup hierarchy"; exit 1; }
snapshot >"$LOGDIR/host.before"

# this run's
truncate -s 8M "$RUN_TMP/img" && mkfs.ext4 -q "$RUN_TMP/img" && mkdir "$RUN_TMP/m" &&
    mount -o loop "$RUN_TMP/img" "$RUN_TMP/m" || { echo "FAIL could not plant a mount"; exit 1; }
mkdir "$RUN_TMP/st" && : >"$RUN_TMP/st/corral.db"
ours=$(tag "$RUN_TMP/st")
mkdir -p "$CG/$ours/lease-ours"
# another corral's: a live state directory outside the run
: >"$O/corral.db"
theirs=$(tag "$O")
mkdir -p "$CG/$theirs/lease-theirs"
truncate -s 8M "$O/img" && L=$(losetup -f --show "$O/img")
# the host's, seen through a view (make fresh-check): $O/view/h is the
# host's /srv/h, so its cgroup is tagged with /srv/h
mkdir -p "$O/view/h" && : >"$O/view/h/corral.db"
export CORRAL_LEFTOVERS_HOST="$O/view=/srv"
host=state-$(printf %s /srv/h | sha256sum | cut -c1-16)
mkdir -p "$CG/$host/lease-host"

left=$(new_leftovers)
expect() { # WHAT PATTERN yes|no
	if grep -qF -- "$2" <<<"$left"; then got=yes; else got=no; fi
	if [ "$got" = "$3" ]; then echo "ok    $1"; else echo "FAIL  $1"; fail=1; fi
}
expect "a mount under the run is named" "mount $RUN_TMP/m" yes
expect "its loop device is named" "loop $(findmnt -n -o SOURCE "$RUN_TMP/m")" yes
expect "a cgroup of the run's state directory is named" "$ours/lease-ours" yes
expect "another's live lease cgroup is not" "$theirs/lease-theirs" no
expect "a loop image outside the run is not" "loop $L" no
expect "a host's live lease cgroup seen through a view is not" "$host/lease-host" no
[ "$fail" = 0 ] && echo "leftovers_planted: passed" || echo "leftovers_planted: FAILED"
exit "$fail"
