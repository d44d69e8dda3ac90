#!/usr/bin/env bash
# fresh-check.sh: the README's two commands on a brand-new Debian 12.
#
# Builds a minbase Debian 12 root with debootstrap (git and make added,
# nothing else), clones this repository's committed HEAD into it, enters
# it with a new mount namespace and pivot_root (not chroot: the sandboxes
# need user namespaces, which the kernel refuses inside a chroot), with
# /tmp as a tmpfs as on many hosts, and runs there, as root (the kernel, its
# uids and so /run/corral's uid pool stay the host's):
#   1. `make demo DEMO_ARGS=--no-console`: packages, build, the demo's five
#      agents started without the console; then the checks that they run
#      and end as the demo says, and `corral reconcile` leaves nothing;
#   2. `make test`.
# Prints the wall time of each step and exits non-zero if either fails.
# The root shares the host's kernel, so its leases and the host's draw
# lease uids from one pool and its leftover check sees the host's cgroups;
# it sees the host's /tmp and /var/tmp read-only (/run/host) to tell the
# host's corral state directories apart. Do not run a `make test` on the
# host meanwhile: that one cannot see the root's. Whatever the root leaves
# running ends with the check, also when it is interrupted.
#
#   make fresh-check      (or scripts/fresh-check.sh)
#   FRESH_ROOT=DIR        where to build the root (default /var/tmp/corral-fresh;
#                         removed first, kept afterwards for a look)
#   FRESH_MIRROR=URL      the Debian mirror (default: the host's own apt source)
#   FRESH_SKIP_TEST=1     stop after the demo step
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
ROOT=${FRESH_ROOT:-/var/tmp/corral-fresh}
SUITE=bookworm

die() { echo "fresh-check: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, mount namespaces)"
command -v debootstrap >/dev/null || {
	echo "fresh-check: installing debootstrap" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	    debootstrap >/dev/null
}
git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1 || die "$SRC is not a git checkout (the check clones its HEAD)"

# The host's own Debian mirror: the first URI of its apt sources.
mirror() {
	local f u
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		u=$(awk '/^URIs:/ { print $2; exit }' "$f")
		case $u in */debian) echo "$u"; return ;; esac
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		u=$(awk '$1 == "deb" && $3 ~ /^bookworm/ { print $2; exit }' "$f")
		[ -n "$u" ] && { echo "$u"; return; }
	done
}
MIRROR=${FRESH_MIRROR:-$(mirror)}
[ -n "$MIRROR" ] || die "no Debian mirror found in /etc/apt: set FRESH_MIRROR"

t_all=$SECONDS
step() { printf 'fresh-check: %-44s %4ds\n' "$1" "$2"; }

# Anything still mounted under an earlier root first (a killed run).
if [ -e "$ROOT" ]; then
	awk -v r="$ROOT" 'index($5, r) == 1 { print $5 }' /proc/self/mountinfo |
	    sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
	rm -rf --one-file-system "$ROOT"
fi
mkdir -p "$ROOT"

t=$SECONDS
debootstrap --variant=minbase --include=git,make "$SUITE" "$ROOT" "$MIRROR" \
    >"$ROOT.debootstrap.log" 2>&1 || { tail -n 30 "$ROOT.debootstrap.log"; die "debootstrap failed"; }
step "debootstrap (minbase + git + make)" $((SECONDS - t))
# The same apt sources a freshly installed machine here has (release,
# updates, security), without any third-party repository of the host.
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
	cp /etc/apt/sources.list.d/debian.sources "$ROOT/etc/apt/sources.list.d/"
	rm -f "$ROOT/etc/apt/sources.list"
fi
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
# The certificate authorities this machine added for its own network (a
# TLS-inspecting proxy): a fresh machine here would have them too; the
# ca-certificates package takes them in when `make demo` installs it.
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
	mkdir -p "$ROOT/usr/local/share/ca-certificates"
	cp /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/"
fi
git clone -q "$SRC" "$ROOT/root/corral"
echo "fresh-check: root $ROOT, mirror $MIRROR, commit $(git -C "$ROOT/root/corral" rev-parse --short HEAD)"

# What runs inside: the README's two commands, as a new user types them.
cat >"$ROOT/root/fresh-inside.sh" <<'INSIDE'
#!/bin/bash
set -u
cd /root/corral
rc=0
step() { printf 'fresh-check: %-44s %4ds  %s\n' "$1" "$2" "$3"; }
t=$SECONDS
if make demo DEMO_ARGS=--no-console >/root/demo.log 2>&1; then v=ok; else v=FAILED; rc=1; fi
step "make demo (packages, build, 5 agents)" $((SECONDS - t)) $v
tail -n 12 /root/demo.log
if [ $v = ok ]; then
	t=$SECONDS
	v=ok
	# The demo's promises: five leases; the sandboxed ones end (one blocks
	# on its question until answered); the command the demo printed works
	# as typed (corral is on PATH).
	n=$(corral ls --json | jq length) || n=0
	[ "$n" = 5 ] || { echo "demo: $n leases, expected 5"; v=FAILED; }
	for id in $(corral ls --json | jq -r '.[] | select(.mode != "trusted_local") | .id'); do
		corral wait "$id" --until prompt,blocked,result_ready,failed --timeout 120 >/dev/null ||
		    { echo "demo: lease $id did not settle"; v=FAILED; }
	done
	for id in $(corral ls --json | jq -r '.[] | .id'); do
		corral cancel "$id" >/dev/null 2>&1 || true
		corral wait "$id" --until result_ready,failed,cancelled --timeout 60 >/dev/null 2>&1 || true
	done
	corral reconcile >/dev/null || { echo "demo: reconcile failed"; v=FAILED; }
	[ $v = ok ] || rc=1
	step "demo checks (ls, wait, cancel, reconcile)" $((SECONDS - t)) $v
fi
if [ "${FRESH_SKIP_TEST:-}" != 1 ]; then
	t=$SECONDS
	if make test >/root/test.log 2>&1; then v=ok; else v=FAILED; rc=1; fi
	step "make test" $((SECONDS - t)) $v
	sed -n '/^==== make test: summary/,$p' /root/test.log
	[ $v = ok ] || grep -E '^(FAIL|not ok)|\*\*\*(Failed|Timeout)' /root/test.log | head -40
fi
exit $rc
INSIDE
chmod +x "$ROOT/root/fresh-inside.sh"

# Everything the root starts, sandboxes included, runs in one cgroup of a
# hierarchy corral leaves alone (blkio), so that whatever the root leaves
# running -- the demo's agents, the second tenant's -- ends with the check,
# also when it is interrupted or killed (then the next run ends them).
TRACK=
for h in blkio devices; do
	[ -w "/sys/fs/cgroup/$h/cgroup.procs" ] || continue
	TRACK=/sys/fs/cgroup/$h/corral-fresh-check
	break
done
end_tracked() {
	local i p
	[ -n "$TRACK" ] && [ -d "$TRACK" ] || return 0
	for i in $(seq 100); do
		p=$(cat "$TRACK/cgroup.procs" 2>/dev/null) || break
		[ -n "$p" ] || break
		kill -9 $p 2>/dev/null || true
		sleep 0.1
	done
	rmdir "$TRACK" 2>/dev/null ||
	    echo "fresh-check: warning: $TRACK still has processes" >&2
}
if [ -n "$TRACK" ]; then
	end_tracked
	mkdir "$TRACK"
	trap end_tracked EXIT
	trap 'exit 130' INT TERM HUP
else
	echo "fresh-check: warning: no cgroup v1 blkio or devices hierarchy: what the root leaves running is not ended" >&2
fi

# Enter: a private mount namespace, the root bound onto itself, the
# kernel's file systems, a tmpfs /tmp and /run, then pivot_root into it.
t=$SECONDS
set +e
# (in the background, so that a signal runs the trap at once)
unshare --mount --propagation private -- /bin/sh -eu -c '
	R=$1
	[ -z "$3" ] || echo $$ >"$3/cgroup.procs"
	mount --bind "$R" "$R"
	mount -t proc proc "$R/proc"
	mount --rbind /sys "$R/sys"
	mount --rbind /dev "$R/dev"
	mount -t tmpfs -o mode=1777 tmpfs "$R/tmp"
	mount -t tmpfs -o mode=755 tmpfs "$R/run"
	# Lease uids are the kernel'"'"'s, shared with the host: so is the
	# machine-wide pool that hands them out (/run/corral/uids).
	mkdir -p /run/corral "$R/run/corral"
	mount --bind /run/corral "$R/run/corral"
	# The host'"'"'s scratch, read-only: its corral state directories are
	# another tenant'"'"'s, whose cgroups the leftover check leaves alone.
	for d in tmp var/tmp; do
		mkdir -p "$R/run/host/$d"
		mount --bind "/$d" "$R/run/host/$d"
		mount -o remount,bind,ro "$R/run/host/$d"
	done
	cd "$R"
	mkdir -p .oldroot
	pivot_root . .oldroot
	cd /
	umount -l /.oldroot
	exec env -i HOME=/root TERM=dumb LANG=C \
	    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	    FRESH_SKIP_TEST="$2" \
	    CORRAL_LEFTOVERS_HOST="/run/host/tmp=/tmp /run/host/var/tmp=/var/tmp" \
	    /bin/bash /root/fresh-inside.sh
' fresh "$ROOT" "${FRESH_SKIP_TEST:-}" "$TRACK" </dev/null &
wait $!
rc=$?
set -e
step "inside the fresh root" $((SECONDS - t))
step "total" $((SECONDS - t_all))
if [ "$rc" = 0 ]; then echo "fresh-check: passed"; else echo "fresh-check: FAILED (logs: $ROOT/root/*.log)"; fi
exit "$rc"
