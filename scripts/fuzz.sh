#!/bin/sh
# Run every libFuzzer target in BUILD/fuzz for RUNS iterations on its
# committed corpus (fuzz/corpus/<name>), failing on the first crash.
set -eu
build=$1
runs=$2
here=$(cd "$(dirname "$0")/.." && pwd)
found=0
for t in "$build"/fuzz/fuzz_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t" | sed 's/^fuzz_//')
	corpus="$here/fuzz/corpus/$name"
	work=$(mktemp -d)
	[ -d "$corpus" ] && cp -r "$corpus"/. "$work"/ 2>/dev/null || true
	echo "fuzz: $name ($runs runs)"
	"$t" -runs="$runs" -max_len=65536 -timeout=20 "$work" >"$work.log" 2>&1 || {
		tail -n 40 "$work.log"; echo "fuzz: $name FAILED"; exit 1; }
	tail -n 1 "$work.log"
	rm -rf "$work" "$work.log"
	found=$((found + 1))
done
[ "$found" -gt 0 ] || { echo "fuzz: no targets built in $build/fuzz"; exit 1; }
echo "fuzz: $found passed, 0 failed"
