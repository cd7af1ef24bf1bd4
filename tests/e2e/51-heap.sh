#!/usr/bin/env bash
# On a kernel whose transparent huge pages are given on advice (the usual
# "madvise" mode), perfport grows its heap ahead and advises it, so that
# what the pass allocates is faulted in 2 MiB at a time (util/mem.c): while
# perfport waits to open its input, its heap is marked "hg" in smaps.
. "$(dirname "$0")/lib/common.sh"
thp=/sys/kernel/mm/transparent_hugepage/enabled
[ -r "$thp" ] || skip "no transparent huge pages on this kernel ($thp)"
case $(cat "$thp") in
*"[madvise]"*) ;;
*) skip "transparent huge pages are '$(cat "$thp")' here, not on advice: the heap is the kernel's to place" ;;
esac
mkfifo "$WORK/in"
"$PERFPORT" -q info -i "$WORK/in" >"$WORK/out" 2>&1 &
pid=$!
advised=no
# hg: perfport's heap is advised for huge pages
hg() {
	[ -r "/proc/$pid/smaps" ] && awk '
		/^[0-9a-f]+-[0-9a-f]+ / { heap = ($6 == "[heap]") }
		heap && /^VmFlags:/ && / hg( |$)/ { found = 1 }
		END { exit !found }' "/proc/$pid/smaps"
}
# until the heap is advised, or perfport waits in the FIFO's open (its
# wchan: whatever it advises is done by then), however long a loaded
# machine takes to get it there; 10 minutes at most, against a hang
for i in $(seq 6000); do
	if hg; then advised=yes; break; fi
	if [ "$(cat "/proc/$pid/wchan" 2>/dev/null)" = wait_for_partner ]; then
		hg && advised=yes
		break
	fi
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
[ -r "/proc/$pid/smaps" ] && awk '/^[0-9a-f]+-[0-9a-f]+ .*\[heap\]/ { print "heap: " $1 }' "/proc/$pid/smaps"
# an empty input: perfport says so and exits (the writer's open would block
# forever if perfport were gone: bounded)
timeout 10 bash -c ': >"$1"' _ "$WORK/in" || :
for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill "$pid" 2>/dev/null || :
wait "$pid" || :
grep -q . "$WORK/out" || fail "no complaint about an empty input"
[ "$advised" = yes ] || fail "perfport's heap is not advised for huge pages"
echo "ok: the heap is advised for huge pages"
