#!/bin/busybox sh
# record-in-vm.sh - the arm64 VM's /init (make-fixtures.sh puts it there):
# records the test programs with Debian's perf, writes perf script's view
# of each recording and perf archive's tarball, and writes them all as a
# tar stream to the second disk (/dev/vdb), then powers off.
# busybox's tools last: perf archive needs GNU tar (tar:arm64)
/bin/busybox mkdir -p /bb
/bin/busybox --install -s /bb
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:/bb HOME=/root LC_ALL=C
say() { echo "pp: $*"; }
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tmpfs tmp /tmp
for m in $(cat /mods/order); do insmod "/mods/$m" || say "insmod $m failed"; done
sleep 1
# the disks by their size (the order of virtio-mmio devices is QEMU's):
# 256 MiB the ext4 one for the waits' files, 512 MiB the results' one
DISK= OUTDEV=
for b in /sys/block/vd*; do
	case $(cat $b/size) in
	524288) DISK=/dev/${b##*/} ;;
	1048576) OUTDEV=/dev/${b##*/} ;;
	esac
done
mount -t ext4 "$DISK" /disk || say "no ext4 disk: the I/O waits will not wait"
echo -1 >/proc/sys/kernel/perf_event_paranoid
echo 0 >/proc/sys/kernel/kptr_restrict
say "kernel $(uname -r) on $(uname -m), $(grep -c ^processor /proc/cpuinfo) CPUs, features: $(grep -m1 Features /proc/cpuinfo | cut -d: -f2)"

R=/results
mkdir -p $R
cd $R
rec() { # rec NAME PERF-RECORD-ARGS...
	name=$1
	shift
	say "recording $name: perf record $*"
	perf record -q -o "$name.data" "$@" >"$name.record.log" 2>&1 || say "perf record $name failed: $(tail -3 $name.record.log)"
	# (--no-inline: perf runs addr2line for inlined calls, which the VM
	# does not have, and dies of SIGPIPE; inline chains are checked against
	# addr2line on the host)
	perf script --no-inline -i "$name.data" -F comm,tid,time,event,ip,sym,dso >"$name.script" 2>/dev/null
	[ -s "$name.script" ] || say "perf script $name wrote nothing"
	rm -f "$name.record.log"
}
P=/opt/pp
rec stacks-fp -e cpu-clock -F 499 -g -- $P/stacks 1
rec stacks-dwarf -e cpu-clock -F 199 --call-graph dwarf,4096 -- $P/stacks 1
rec stacks-pac-fp -e cpu-clock -F 499 -g -- $P/stacks-pac 1
rec stacks-pac-dwarf -e cpu-clock -F 199 --call-graph dwarf,4096 -- $P/stacks-pac 1
rec inl-fp -e cpu-clock -F 999 -g -- $P/inl 200000
rec inl-dwarf -e cpu-clock -F 299 --call-graph dwarf,4096 -- $P/inl 100000
say "recording stacks-pipe: perf record -o - (a pipe)"
perf record -q -o - -e cpu-clock -F 499 -g -- $P/stacks 0.5 >stacks-pipe.data 2>/dev/null
perf script --no-inline -i stacks-pipe.data -F comm,tid,time,event,ip,sym,dso >stacks-pipe.script 2>/dev/null
# the wait primitives, one per thread, with the syscalls' arguments: from
# the stack copy (dwarf) and from the registers alone (--user-regs). (Not
# -z: perf record then writes no build ids, and perf archive has nothing
# to pack. A large buffer: under TCG perf reads it slowly.)
cd /disk 2>/dev/null || cd /tmp
EV="-e cpu-clock/freq=99/ -e sched:sched_switch --switch-events -e sched:sched_waking"
say "recording waits-dwarf"
perf record -q -o $R/waits-dwarf.data $EV -m 16384 --call-graph dwarf,2048 -- $P/waits 3 $PWD >/dev/null 2>&1 ||
	say "perf record waits-dwarf failed"
say "recording waits-regs"
perf record -q -o $R/waits-regs.data $EV -m 16384 -g --user-regs=x0,x1,x2,x3,x4,x5 -- $P/waits 3 $PWD >/dev/null 2>&1 ||
	say "perf record waits-regs failed"
cd $R
for f in *.data; do
	[ "$f" = stacks-pipe.data ] && continue
	say "perf archive $f"
	perf archive "$f" >archive.log 2>&1 || say "perf archive $f failed: $(tail -3 archive.log)"
	rm -f archive.log
done
perf --version >perf-version.txt
uname -a >uname.txt
say "results: $(ls | wc -l) files, $(du -sk . | cut -f1) KiB"
cd /
tar -cf "$OUTDEV" results && sync
say done
poweroff -f
