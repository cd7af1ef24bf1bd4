#!/usr/bin/env bash
# Nothing lost, nothing destroyed: an output that cannot be written whole
# is an error (exit 2) and is not left in place; what perfport did not
# create is never removed.
# - a device node at -o whose writes fail (the test's own /dev/full: mknod
#   in its directory) stays a device;
# - a symbolic link at -o: the file it points to is replaced whole, the
#   link stays; when the write fails, the file keeps what it held;
# - a full filesystem (a 16 KiB tmpfs the test mounts): export's file,
#   report --json, stacks and export -o - redirected there exit 2, and no
#   half file (nor a temporary) is left.
. "$(dirname "$0")/lib/common.sh"
F="$TOP/samples/offcpu.perf.data"
SMALL="$WORK/small"
mkdir -p "$SMALL"
trap 'rc=$?; umount "$SMALL" 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$WORK"; exit $rc' EXIT

# run CMD...: perfport's exit status, its stderr in $WORK/err
run() { local rc=0; "$PERFPORT" -q "$@" 2>"$WORK/err" || rc=$?; echo "$rc"; }

# 1. a device whose writes fail
if mknod "$WORK/full" c 1 7 2>/dev/null; then
	rc=$(run export -i "$F" -f folded -o "$WORK/full")
	[ "$rc" = 2 ] || fail "export to a full device: exit $rc, want 2 ($(cat "$WORK/err"))"
	[ -c "$WORK/full" ] || fail "export removed the device node it could not write"
	has "cannot write '$WORK/full'" "$WORK/err" || fail "no error naming the device: $(cat "$WORK/err")"
	echo "ok: a device whose writes fail: exit 2, the node stays"
else
	echo "(mknod is not allowed here: the device case is not tried)"
fi

# 2. a symbolic link to a file: the file replaced whole, the link kept
echo old >"$WORK/target.folded"
ln -s target.folded "$WORK/link.folded"
rc=$(run export -i "$F" -f folded -o "$WORK/link.folded")
[ "$rc" = 0 ] || fail "export through a link: exit $rc ($(cat "$WORK/err"))"
[ -L "$WORK/link.folded" ] || fail "export replaced the link itself"
"$PERFPORT" -q export -i "$F" -f folded -o - | cmp -s - "$WORK/target.folded" ||
	fail "the link's target does not hold the export"
echo "ok: a link's target replaced whole, the link kept"

# 2b. SIGTERM while a perf archive is unpacked: its private directory is
#     removed (it was left, 772 MB of it); and while an export with
#     --archive writes: both the output's temporary and the archive's
#     directory go (the output's handler replaced the archive's)
mkdir -p "$WORK/arc/d" "$WORK/tmp"
head -c 150M /dev/zero >"$WORK/arc/d/big"
tar cjf "$WORK/arc/big.tar.bz2" -C "$WORK/arc/d" big
rm -f "$WORK/arc/d/big"
# into perfport's cache (a hidden directory there until it is whole), and,
# with no cache to be had (no HOME), into a private directory of TMPDIR
for where in cache tmp; do
	if [ $where = cache ]; then
		XDG_CACHE_HOME="$WORK/cache" "$PERFPORT" -q report -i "$F" --archive "$WORK/arc/big.tar.bz2" \
			>/dev/null 2>&1 &
		watch="$WORK/cache/perfport/archives"
	else
		env -u HOME -u XDG_CACHE_HOME TMPDIR="$WORK/tmp" "$PERFPORT" -q report -i "$F" \
			--archive "$WORK/arc/big.tar.bz2" >/dev/null 2>&1 &
		watch="$WORK/tmp"
	fi
	pid=$!
	# until the directory is there, however long a loaded machine takes to
	# get perfport that far (the unpack then lasts seconds)
	until [ -n "$(ls -A "$watch" 2>/dev/null)" ]; do
		kill -0 $pid 2>/dev/null || break
		sleep 0.01
	done
	[ -n "$(ls -A "$watch" 2>/dev/null)" ] || fail "$where: no archive directory was made"
	kill -TERM $pid
	rc=0; wait $pid || rc=$?
	[ $rc -eq 143 ] || fail "$where: SIGTERM while unpacking: exit $rc, want 143"
	[ -z "$(ls -A "$watch")" ] || fail "$where: SIGTERM while unpacking left $(ls -A "$watch")"
done
echo "ok: SIGTERM while a perf archive is unpacked: its directory removed"

# 2c. a function named with control bytes (an ESC sequence that would clear
#     the terminal): printed with each as '?', by report and stacks
cat >"$WORK/evil.c" <<'EOF'
__attribute__((noinline)) int spin(int n) { volatile int x = 0; for (int i = 0; i < n; i++) x += i; return x; }
int main(void) { int s = 0; for (int k = 0; k < 2000; k++) s += spin(100000); return s == 42; }
EOF
if cc -O1 -fno-omit-frame-pointer -o "$WORK/evil0" "$WORK/evil.c" &&
   objcopy --redefine-sym spin=$'sp\x1b[2Jin' "$WORK/evil0" "$WORK/evil" &&
   perf record -q -o "$WORK/evil.data" -e cpu-clock -- "$WORK/evil" >/dev/null 2>&1; then
	"$PERFPORT" -q report -i "$WORK/evil.data" --no-tree --top 3 >"$WORK/evil.txt" 2>&1
	"$PERFPORT" -q stacks -i "$WORK/evil.data" >>"$WORK/evil.txt" 2>&1
	! grep -q $'\x1b' "$WORK/evil.txt" && has 'sp?\[2Jin' "$WORK/evil.txt" ||
		fail "a name's control bytes reached the output: $(grep -a sp "$WORK/evil.txt" | head -2 | od -c | head -3)"
	echo "ok: a name with control bytes printed with '?'"
else
	echo "(cannot build or record the test program: names with control bytes not tried)"
fi

# 3. a full filesystem
mount -t tmpfs -o size=16k tmpfs "$SMALL" 2>/dev/null ||
	skip "cannot mount a small tmpfs here (needs root): the full-filesystem cases are not tried"
left() { find "$SMALL" -mindepth 1 \( -name "$1" -o -name ".$1.perfport-*" \) | head -3; }
rc=$(run export -i "$F" -f flamegraph -o "$SMALL/fg.html")
[ "$rc" = 2 ] || fail "export -f flamegraph to a full filesystem: exit $rc, want 2"
[ -z "$(left fg.html)" ] || fail "a half page left behind: $(left fg.html)"
has "cannot write '$SMALL/fg.html'" "$WORK/err" || fail "no error naming the file: $(cat "$WORK/err")"
echo "ok: export to a full filesystem: exit 2, nothing left"

# the file a link points to keeps what it held when the new one cannot be written
echo old >"$SMALL/kept.html"
ln -s "$SMALL/kept.html" "$WORK/kept.html"
rc=$(run export -i "$F" -f flamegraph -o "$WORK/kept.html")
[ "$rc" = 2 ] && [ -L "$WORK/kept.html" ] && [ "$(cat "$SMALL/kept.html")" = old ] ||
	fail "a failed export through a link: exit $rc, link $(stat -c %F "$WORK/kept.html" 2>&1), target '$(head -c 40 "$SMALL/kept.html")'"
rm -f "$SMALL/kept.html"
echo "ok: a failed export through a link leaves its file as it was"

for c in "report --json" "stacks" "export -f flamegraph -o -"; do
	rc=0
	"$PERFPORT" -q $c -i "$F" >"$SMALL/out" 2>"$WORK/err" || rc=$?
	[ "$rc" = 2 ] || fail "'$c' to a full filesystem: exit $rc, want 2 ($(cat "$WORK/err"))"
	has "cannot write" "$WORK/err" || fail "'$c': no error said: $(cat "$WORK/err")"
	rm -f "$SMALL/out"
done
echo "ok: report --json, stacks, export -o - to a full filesystem: exit 2"
