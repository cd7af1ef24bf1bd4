#!/usr/bin/env bash
# Seeds for `make fuzz`: the bundled samples and the shared corpus files
# under 1 MiB (libFuzzer's -max_len), copied into DIR.
set -eu
dir=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$dir" "$(dirname "$dir")/corpus"
n=0
for f in "$top"/samples/*.perf.data $(find "$top/../shared/corpus" -type f 2>/dev/null); do
	[ -f "$f" ] && head -c 8 "$f" | grep -q PERFILE2 || continue
	[ "$(stat -c %s "$f")" -le 1048576 ] || continue
	cp "$f" "$dir/$(echo "$f" | md5sum | cut -c1-16)"
	n=$((n + 1))
done
echo "$n seed files in $dir"
