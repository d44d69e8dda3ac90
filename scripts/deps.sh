#!/bin/sh
# Install the Debian packages listed in scripts/packages.txt that are missing.
# Idempotent: does nothing (and needs no network) when all are present.
set -eu
here=$(dirname "$0")
missing=""
for p in $(grep -v '^#' "$here/packages.txt"); do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = "installed" ] && continue
	# ... or an installed package provides it (NodeSource's nodejs: npm)
	dpkg-query -W -f='${db:Status-Status} ${Provides}\n' 2>/dev/null |
		grep '^installed ' | tr ',' '\n' | sed 's/^installed //; s/ (.*//; s/^ *//' |
		grep -qx "$p" && continue
	missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps: installing$missing" >&2
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
