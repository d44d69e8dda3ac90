#!/bin/sh
# link-bin.sh BINARY DIR: after `make demo`, make `corral` work as typed.
# Links DIR/corral to the binary just built, as root only, and never over
# a file that is not already such a link (a `make install`ed corral stays).
set -eu
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
dir=$2
[ "$(id -u)" = 0 ] || { echo "corral: run it as $bin"; exit 0; }
if [ -e "$dir/corral" ] && [ ! -L "$dir/corral" ]; then
	echo "corral: $dir/corral is already installed; this build is $bin"
	exit 0
fi
mkdir -p "$dir"
ln -sfn "$bin" "$dir/corral"
echo "corral: $dir/corral -> $bin"
