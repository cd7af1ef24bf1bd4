#!/usr/bin/env bash
# make-fixtures.sh - make the arm64 recordings of tests/arm64/data again.
#
# Boots Debian's arm64 kernel under qemu-system-aarch64 (TCG: no arm64
# hardware needed) with an initramfs holding Debian's arm64 perf, busybox
# and the test programs of tests/arm64/progs and tests/e2e/progs,
# cross-compiled here. Inside the VM, perf records them (-g, --call-graph
# dwarf, --user-regs, sched_switch and sched_waking), perf script writes
# the oracle and perf archive the binaries and kernel symbols; the results
# come back on a second virtual disk written as a tar stream.
#
# usage: tests/arm64/make-fixtures.sh [OUTDIR]   (default tests/arm64/data)
# Needs root for apt-get (packages: qemu-system-arm gcc-aarch64-linux-gnu
# g++-aarch64-linux-gnu binutils-aarch64-linux-gnu e2fsprogs cpio, and
# arm64 as a foreign architecture). Work files go to $ARM64_WORK (default
# /var/tmp/perfport-arm64). Takes about 10 minutes on 2 cores.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
OUT=$(realpath -m "${1:-$HERE/data}")
W=${ARM64_WORK:-/var/tmp/perfport-arm64}
# pointer authentication on (the pac build's return addresses are signed);
# SVE off: perf 6.1 then asks for the VG register with every dwarf sample,
# which QEMU's TCG refuses (EOPNOTSUPP)
CPU=${ARM64_CPU:-max,sve=off,pauth-impdef=on}
say() { printf 'make-fixtures: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

# 1. the host's tools
need=()
for p in qemu-system-aarch64:qemu-system-arm aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu \
	aarch64-linux-gnu-g++:g++-aarch64-linux-gnu aarch64-linux-gnu-objcopy:binutils-aarch64-linux-gnu \
	mkfs.ext4:e2fsprogs cpio:cpio; do
	command -v "${p%%:*}" >/dev/null || need+=("${p#*:}")
done
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	[ "$(id -u)" = 0 ] || die "arm64 is not a foreign architecture here: run as root, or dpkg --add-architecture arm64 && apt-get update"
	dpkg --add-architecture arm64
	apt-get update -q
fi
if [ ${#need[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || die "missing packages: ${need[*]} (apt-get install them as root)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >&2
fi

# 2. Debian's arm64 packages: the kernel, perf and what it links, busybox
mkdir -p "$W/debs"
cd "$W/debs"
KPKG=$(apt-cache depends linux-image-arm64:arm64 | sed -n 's/^ *Depends: \(linux-image-[0-9][^:]*\).*/\1/p' | head -1)
[ -n "$KPKG" ] || die "no arm64 kernel package found (apt-cache depends linux-image-arm64:arm64)"
# the libraries perf links and the programs the VM runs: perf archive is a
# bash script that needs GNU tar (not perl's or python's own modules: perf's
# scripting is not used)
PKGS=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
	--no-replaces --no-enhances linux-perf:arm64 busybox-static:arm64 libstdc++6:arm64 tar:arm64 bash:arm64 |
	grep -v '^ ' | grep ':arm64$' | grep -E '^(lib|linux-perf|busybox|tar|bash|zlib)' |
	grep -vE 'stdlib|minimal' | sort -u)
say "downloading $KPKG and $(echo "$PKGS" | wc -w) packages"
apt-get download -q "$KPKG:arm64" $PKGS >/dev/null 2>&1 || apt-get download "$KPKG:arm64" $PKGS >&2

# 3. the VM's root: the packages unpacked, docs left out
cd "$W"
rm -rf root k
mkdir -p root k
for d in debs/*.deb; do
	case $d in
	*/linux-image-*) dpkg-deb -x "$d" k ;;
	*) dpkg-deb -x "$d" root ;;
	esac
done
rm -rf root/usr/share/doc root/usr/share/man root/usr/share/locale root/usr/lib/aarch64-linux-gnu/perl*
KVER=$(ls k/lib/modules)
# the modules for the virtual disks and ext4, with what they depend on
modinfo_of() { # (objcopy cannot write to a pipe)
	aarch64-linux-gnu-objcopy -O binary --only-section=.modinfo "$1" "$W/modinfo" && tr '\0' '\n' <"$W/modinfo"
}
mkdir -p root/mods
: >root/mods/order
add_mod() {
	local name=$1 f d
	grep -qx "$name.ko" root/mods/order && return 0
	f=$(find "k/lib/modules/$KVER/kernel" -name "$name.ko" -o -name "${name//_/-}.ko" | head -1)
	[ -n "$f" ] || return 0 # built in
	for d in $(modinfo_of "$f" | sed -n 's/^depends=//p' | tr ',' ' '); do add_mod "$d"; done
	cp "$f" root/mods/
	basename "$f" >>root/mods/order
}
for m in crc32c_generic virtio_mmio virtio_blk ext4; do add_mod "$m"; done

# 4. the test programs, cross-compiled with their debug info
mkdir -p root/opt/pp
CC=aarch64-linux-gnu-gcc
CXX=aarch64-linux-gnu-g++
$CC -O2 -g -fno-omit-frame-pointer -pthread -o root/opt/pp/stacks "$HERE/progs/stacks.c"
$CC -O2 -g -fno-omit-frame-pointer -mbranch-protection=standard -pthread -o root/opt/pp/stacks-pac "$HERE/progs/stacks.c"
$CXX -O2 -g -fno-omit-frame-pointer -o root/opt/pp/inl "$TOP/tests/e2e/progs/inl.cc"
$CC -O2 -g -fno-omit-frame-pointer -pthread -o root/opt/pp/waits "$TOP/tests/e2e/progs/waits.c"
cp "$HERE/record-in-vm.sh" root/init
chmod +x root/init
ln -sf bash root/bin/sh
mkdir -p root/proc root/sys root/dev root/tmp root/root root/sbin root/usr/sbin root/disk

# 5. the initramfs and the disks: vda for the waits' files (ext4), vdb
# for the results (a tar stream written to the raw device)
(cd root && find . | cpio -o -H newc --quiet) | gzip -1 >initrd.gz
rm -f disk.img out.img
truncate -s 256M disk.img
mkfs.ext4 -q -F disk.img
truncate -s 512M out.img

# 6. boot, record, power off
say "booting $KVER under qemu-system-aarch64 -cpu $CPU (TCG)"
timeout 1500 qemu-system-aarch64 -M virt -cpu "$CPU" -smp 2 -m 2048 -nographic -no-reboot \
	-kernel "k/boot/vmlinuz-$KVER" -initrd initrd.gz -append "console=ttyAMA0 panic=-1 quiet" \
	-drive if=none,file=disk.img,format=raw,id=d0 -device virtio-blk-device,drive=d0 \
	-drive if=none,file=out.img,format=raw,id=d1 -device virtio-blk-device,drive=d1 \
	</dev/null >vm.log 2>&1 || die "qemu failed: see $W/vm.log"
grep -q '^pp: done' vm.log || die "the VM did not finish: see $W/vm.log"

# 7. the results: perf.data files and perf script's view of them, xz-compressed,
# the tarballs of perf archive merged into one (archive.tar.xz)
rm -rf out
mkdir out
tar -xf out.img -C out || die "no results on the output disk: see $W/vm.log"
# one archive for them all: perf archive's tarballs hold the same kernel
# symbols, libc and ld.so each; their union, once, xz-compressed
mkdir -p out/debug
for a in out/results/*.tar.bz2; do
	tar -xjf "$a" -C out/debug
	rm "$a"
done
mkdir -p "$OUT"
rm -f "$OUT"/*
# (the names as perf archive writes them: no "./" before them)
(cd out/debug && tar -cJf "$OUT/archive.tar.xz" --sort=name --owner=0 --group=0 --mtime=@0 -- .[!.]* *)
cp out/results/* "$OUT/"
# the recordings and perf script's text compressed (the tests unpack them)
xz -9 "$OUT"/*.data "$OUT"/*.script
say "wrote $(ls "$OUT" | wc -l) files to $OUT ($(du -sh "$OUT" | cut -f1))"
