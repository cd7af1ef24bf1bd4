#!/usr/bin/env bash
# Recordings analysed elsewhere: a recording archived with `perf archive`
# and moved where its binaries are absent (and perf's build-id cache empty)
# names every frame perf script names with the archive unpacked by hand -
# perfport reads the tarball beside the recording itself (or --archive FILE),
# .tar.bz2 and the .gz/.xz/.zst variants, unpacked once into its cache - only
# the members of build ids the recording names and whose files are not here -
# and read there by later runs. A hostile tarball (absolute paths, "..",
# links out of it) writes nothing outside its directory.
. "$(dirname "$0")/lib/common.sh"
need_perf
need_python
perf archive --help >/dev/null 2>&1 || [ -x "$(command -v perf)" ] || skip "perf archive is not available"

mkdir -p "$WORK/rec" "$WORK/away" "$WORK/home" "$WORK/empty" "$WORK/byhand/.debug" "$WORK/tmp"
cp "$TOP/samples/workload.c" "$WORK/rec/"
(cd "$WORK/rec" && cc -O2 -g -fno-omit-frame-pointer -pthread -o arprog workload.c) || fail "cannot build the workload"
# the recording host: its own build-id cache; kernel time (io) and user time
(cd "$WORK/rec" && HOME="$WORK/home" perf record -g -F 999 -e cpu-clock -o perf.data ./arprog 0.5 all \
	>"$WORK/record.log" 2>&1) || { cat "$WORK/record.log"; fail "perf record: $(said "$WORK/record.log")"; }
(cd "$WORK/rec" && HOME="$WORK/home" perf archive perf.data >/dev/null 2>&1) || skip "perf archive failed here"
[ -f "$WORK/rec/perf.data.tar.bz2" ] || skip "perf archive wrote no tarball"
tar tjf "$WORK/rec/perf.data.tar.bz2" >"$WORK/list.txt"
grep -q "kallsyms$" "$WORK/list.txt" || fail "the archive has no kallsyms"
mv "$WORK/rec/perf.data" "$WORK/rec/perf.data.tar.bz2" "$WORK/away/"
rm -f "$WORK/rec/arprog"

# the oracle: perf script with the archive unpacked by hand into its cache
tar xjf "$WORK/away/perf.data.tar.bz2" -C "$WORK/byhand/.debug"
HOME="$WORK/byhand" perf script -i "$WORK/away/perf.data" -F comm,tid,time,event,ip,sym,dso \
	>"$WORK/away.perf" 2>/dev/null
grep -q "hot_inner" "$WORK/away.perf" || fail "perf script names nothing from the archive"
# perfport: nothing but the tarball beside the recording
HOME="$WORK/empty" TMPDIR="$WORK/tmp" "$PERFPORT" -q stacks -i "$WORK/away/perf.data" >"$WORK/away.ours" ||
	fail "stacks: exit $?"
$PY "$CHECK" frames "$WORK/away.ours" "$WORK/away.perf" 99 k=99 || fail "names with the archive"
[ -z "$(ls -A "$WORK/tmp")" ] || fail "the unpacked archive was left in TMPDIR: $(ls "$WORK/tmp")"
# unpacked once, into the cache: the first run says so, a later one reads
# the cache (the same names, nothing said); only the members needed -
# arprog's (gone from here) and the kernel's, not libc's (here, the same
# build id)
HOME="$WORK/empty" TMPDIR="$WORK/tmp" "$PERFPORT" stacks -i "$WORK/away/perf.data" >"$WORK/away2.ours" \
	2>"$WORK/away2.err" || fail "stacks again: exit $?: $(said "$WORK/away2.err")"
cmp -s "$WORK/away.ours" "$WORK/away2.ours" || fail "the cached archive names otherwise"
! has "unpacking" "$WORK/away2.err" || fail "the archive was unpacked again: $(cat "$WORK/away2.err")"
cache=$(ls -d "$WORK/empty/.cache/perfport/archives/"*/ 2>/dev/null | head -1)
[ -n "$cache" ] && [ -f "$cache/.complete" ] || fail "no archive in the cache: $(ls -R "$WORK/empty" | head)"
find "$cache" -path '*arprog/*/elf' | has . || fail "arprog not in the cache"
find "$cache" -name kallsyms | has . || fail "the kernel's names not in the cache"
! find "$cache" -path '*libc.so*' | has . || fail "libc (here, the same build id) was unpacked"
rm -rf "$WORK/empty/.cache"
HOME="$WORK/empty" "$PERFPORT" stacks -i "$WORK/away/perf.data" >/dev/null 2>"$WORK/away3.err" || fail "stacks: exit $?: $(said "$WORK/away3.err")"
has "unpacking the perf archive '$WORK/away/perf.data.tar.bz2' into perfport's cache" "$WORK/away3.err" ||
	fail "the first run does not say it unpacks: $(cat "$WORK/away3.err")"
echo "ok: the archive unpacked once into the cache, only what the recording needs"
HOME="$WORK/empty" "$PERFPORT" info -i "$WORK/away/perf.data" >"$WORK/info.txt"
grep -q "^kernel names:  the perf archive" "$WORK/info.txt" || fail "info: $(grep kernel "$WORK/info.txt")"
echo "ok: the archive beside the recording names its frames as perf does by hand"

# without it: user frames of the moved binary unknown (a check of the check)
mkdir -p "$WORK/bare" && cp "$WORK/away/perf.data" "$WORK/bare/"
HOME="$WORK/empty" "$PERFPORT" -q stacks -i "$WORK/bare/perf.data" >"$WORK/bare.ours"
grep -q "hot_inner" "$WORK/bare.ours" && fail "named hot_inner without the archive"
# info says, per module, where its symbols came from and what would bring
# the missing ones
grep -q "^  $WORK/rec/arprog: perf archive (" "$WORK/info.txt" ||
	fail "info does not say arprog came from the archive: $(sed -n '/^modules/,$p' "$WORK/info.txt")"
HOME="$WORK/empty" "$PERFPORT" info -i "$WORK/bare/perf.data" >"$WORK/bare.info"
grep -q "^  $WORK/rec/arprog: not named (file not found): run 'perf archive' on the recording host" "$WORK/bare.info" ||
	fail "info does not say how to name arprog: $(sed -n '/^modules/,$p' "$WORK/bare.info")"

# --archive FILE, and the compressions newer perf writes
bunzip2 -c "$WORK/away/perf.data.tar.bz2" >"$WORK/plain.tar"
HOME="$WORK/empty" "$PERFPORT" -q stacks -i "$WORK/bare/perf.data" --archive "$WORK/away/perf.data.tar.bz2" \
	>"$WORK/arch.ours"
grep -q "hot_inner" "$WORK/arch.ours" || fail "--archive FILE"
for z in gz xz zst; do
	case $z in
	gz) gzip -c "$WORK/plain.tar" >"$WORK/bare/perf.data.tar.gz" ;;
	xz) command -v xz >/dev/null || continue; xz -c "$WORK/plain.tar" >"$WORK/bare/perf.data.tar.xz" ;;
	zst) command -v zstd >/dev/null || continue; zstd -q -c "$WORK/plain.tar" >"$WORK/bare/perf.data.tar.zst" ;;
	esac
	HOME="$WORK/empty" "$PERFPORT" -q stacks -i "$WORK/bare/perf.data" >"$WORK/z.ours"
	grep -q "hot_inner" "$WORK/z.ours" || fail "perf.data.tar.$z beside the recording not read"
	rm -f "$WORK/bare/perf.data.tar.$z"
	echo "ok: perf.data.tar.$z"
done

# an archive repacked with "tar -C DIR ." (every name after "./")
mkdir "$WORK/repack"
tar -xf "$WORK/plain.tar" -C "$WORK/repack"
tar -czf "$WORK/dot.tar.gz" -C "$WORK/repack" .
tar -tzf "$WORK/dot.tar.gz" | has "^\./\.build-id/" || fail "the repacked archive's names do not start with ./"
HOME="$WORK/empty" "$PERFPORT" -q stacks -i "$WORK/bare/perf.data" --archive "$WORK/dot.tar.gz" >"$WORK/dot.ours"
cmp -s "$WORK/dot.ours" "$WORK/arch.ours" || fail "an archive of ./ names names otherwise"
echo "ok: an archive whose names start with ./"

# a hostile tarball: nothing lands outside the private directory
$PY - "$WORK" <<'PY' || fail "cannot make the hostile tarball"
import io, tarfile, sys
w = sys.argv[1]
with tarfile.open(w + "/evil.tar.gz", "w:gz") as t:
    for name, kind, arg in (("/tmp/perfport-evil-abs", "file", b"x"), ("../evil-up", "file", b"x"),
                            ("a/../../evil-dotdot", "file", b"x"), ("out", "link", "../../.."),
                            ("up", "link", ".."), ("here", "link", "."), ("out/evil-through", "file", b"x"),
                            ("dev", "char", None), ("ok/file", "file", b"fine")):
        i = tarfile.TarInfo(name)
        if kind == "file":
            i.size = len(arg)
            t.addfile(i, io.BytesIO(arg))
        elif kind == "link":
            i.type, i.linkname = tarfile.SYMTYPE, arg
            t.addfile(i)
        else:
            i.type = tarfile.CHRTYPE
            t.addfile(i)
PY
rm -rf "$WORK/tmp" && mkdir -p "$WORK/tmp/inner"
rc=0; HOME="$WORK/empty" TMPDIR="$WORK/tmp/inner" "$PERFPORT" stacks -i "$WORK/bare/perf.data" \
	--archive "$WORK/evil.tar.gz" >/dev/null 2>"$WORK/evil.err" || rc=$?
[ $rc -eq 0 ] || fail "a hostile archive: exit $rc: $(cat "$WORK/evil.err")"
grep -q "entries not unpacked" "$WORK/evil.err" || fail "no warning about the refused entries: $(cat "$WORK/evil.err")"
[ ! -e /tmp/perfport-evil-abs ] && [ ! -e "$WORK/tmp/evil-up" ] && [ ! -e "$WORK/tmp/evil-dotdot" ] &&
	[ ! -e "$WORK/evil-through" ] && [ -z "$(ls -A "$WORK/tmp/inner")" ] && [ "$(ls -A "$WORK/tmp")" = inner ] ||
	fail "a hostile archive wrote outside its directory: $(find "$WORK/tmp" /tmp/perfport-evil-abs 2>/dev/null)"
echo "ok: a hostile archive stays in its directory, which is removed"
