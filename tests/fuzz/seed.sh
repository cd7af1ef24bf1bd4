#!/usr/bin/env bash
# Seeds for `make fuzz`: the bundled samples and the shared corpus files
# under 64 KiB, copied into DIR, and small seeds cut from every one of them
# (small_seeds.py): the fuzzer then runs at hundreds of executions a second,
# not the tens it ran at on 1 MiB seeds.
set -eu
dir=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$dir" "$(dirname "$dir")/corpus"
n=0
all=()
for f in "$top"/samples/*.perf.data $(find "$top/../shared/corpus" -type f 2>/dev/null); do
	[ -f "$f" ] && head -c 8 "$f" | grep -q PERFILE2 || continue
	all+=("$f")
	[ "$(stat -c %s "$f")" -le 65536 ] || continue
	cp "$f" "$dir/$(echo "$f" | md5sum | cut -c1-16)"
	n=$((n + 1))
done
echo "$n seed files in $dir"
python3 "$(dirname "$0")/small_seeds.py" "$dir" "${all[@]}"
