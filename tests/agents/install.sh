#!/usr/bin/env bash
# install.sh DIR: install the agent CLIs pinned in versions.txt from the npm
# registry into DIR/NAME (npm install --prefix, never -g), each only when
# its installed version is not the pinned one (so a rebuild reuses them,
# and npm's own cache serves a fresh build tree). Fails, naming the
# registry, when it cannot be reached.
set -u
dir=${1:?usage: install.sh DIR}
here=$(cd "$(dirname "$0")" && pwd)
command -v npm >/dev/null || {
	echo "install.sh: npm is not installed (Debian: apt-get install npm; scripts/packages.txt)"
	exit 1
}
registry=$(npm config get registry 2>/dev/null || echo https://registry.npmjs.org/)
# The system's trust store, as git and curl use it, unless npm was told of
# another: node's own list knows nothing of a CA the machine added.
ca=()
case $(npm config get cafile 2>/dev/null) in
''|null|undefined)
	[ -f /etc/ssl/certs/ca-certificates.crt ] &&
	    ca=(--cafile /etc/ssl/certs/ca-certificates.crt) ;;
esac
rc=0
while read -r name spec; do
	case $name in ''|'#'*) continue ;; esac
	pkg=${spec%@*} ver=${spec##*@}
	have=$(jq -r .version "$dir/$name/node_modules/$pkg/package.json" 2>/dev/null)
	if [ "$have" = "$ver" ]; then
		echo "$name: $spec already installed in $dir/$name"
		continue
	fi
	echo "$name: installing $spec from $registry into $dir/$name"
	rm -rf "$dir/$name.new"
	mkdir -p "$dir/$name.new"
	if ! out=$(npm install "${ca[@]}" --prefix "$dir/$name.new" --no-audit --no-fund \
	    --no-save --loglevel=error "$spec" 2>&1); then
		echo "$out" | tail -20
		echo "install.sh: cannot install $spec from the npm registry ($registry)"
		rm -rf "$dir/$name.new"
		rc=1
		continue
	fi
	rm -rf "$dir/$name"
	mv "$dir/$name.new" "$dir/$name"
	chmod -R a+rX "$dir/$name"
done <"$here/versions.txt"
exit $rc
