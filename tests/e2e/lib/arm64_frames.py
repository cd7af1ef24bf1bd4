#!/usr/bin/python3
"""arm64_frames.py [--dwarf] SCRIPT STACKS DEBUGDIR OUT

perf script's stacks of an aarch64 recording with the errors of perf 6.1's
own arm64 unwinding taken out, each shown by evidence that is neither
perf's nor perfport's, so that check.py frames can judge perfport against
the rest. SCRIPT: perf script -F comm,tid,time,event,ip,sym,dso made where
it was recorded; STACKS: perfport stacks of the same recording; DEBUGDIR:
the recording's perf archive unpacked (the modules by their recorded
path); OUT: the corrected script. Prints what was corrected, per kind:

  signed   a return address perf left signed (pointer authentication: bits
           above the 48-bit user address space; perf 6.1 does not strip
           them and names the frame [unknown]) - the frame becomes
           perfport's where perfport's address is the stripped one.
  stale    the caller perf took from lr (its libunwind, and perf's
           leaf-caller injection for -g, return lr - 1) where the leaf's
           CFI - as binutils' readelf --debug-dump=frames-interp reads it -
           says the return address was saved on the stack: lr then holds
           the return address of an earlier call, not the caller. Dropped.
  twice    the caller perf injected from lr although the frame-pointer
           chain has it already (perf compares lr - 1 with the chain's lr,
           so the check for a duplicate never holds). Dropped.
With --dwarf (a --call-graph dwarf recording: perf prints every return
address as ra - 1, so lr - 1 is not told apart by its alignment), "stale"
is only the caller that returns to the leaf's own pc (lr - 1 = pc - 1:
the return address of the call that had just returned) where the CFI
says the return address was saved on the stack and perf's unwinding
stopped there. perf 6.1's libunwind also stops at the first return
address signed with pointer authentication: check.py frames compares the
frames perf has. perfport's stacks are written to OUT.ours with their
return addresses as perf prints them (ra - 1), so that a recursion's
frames, whose return address is the leaf's pc, are told apart alike.
"""
import collections
import glob
import os
import re
import subprocess
import sys

MASK48 = (1 << 48) - 1
READELF = "aarch64-linux-gnu-readelf"


def cfi_table(path):
    """[(start, end, [(loc, ra_rule)])] from readelf's interpreted CFI."""
    out = subprocess.run([READELF, "--debug-dump=frames-interp", path], capture_output=True,
                         text=True).stdout
    fdes = []
    for block in out.split("\n\n"):
        m = re.search(r"FDE cie=\S+ pc=([0-9a-f]+)\.\.([0-9a-f]+)", block)
        if not m:
            continue
        rows, ra_col = [], None
        for line in block.splitlines():
            f = line.split()
            if f and f[0] == "LOC":
                ra_col = f.index("ra") if "ra" in f else None
            elif ra_col is not None and f and re.fullmatch(r"[0-9a-f]{8,}", f[0]):
                rows.append((int(f[0], 16), f[ra_col] if ra_col < len(f) else "u"))
        fdes.append((int(m.group(1), 16), int(m.group(2), 16), rows))
    return fdes


class Modules:
    def __init__(self, debugdir):
        self.debugdir = debugdir
        self.cache = {}

    def ra_saved(self, dso, addr):
        """True where the CFI at addr of dso says the return address is in
        memory, False where it is in lr, None where there is no CFI."""
        if dso not in self.cache:
            files = glob.glob(os.path.join(self.debugdir, dso.lstrip("/"), "*", "elf"))
            self.cache[dso] = cfi_table(files[0]) if files else []
        for start, end, rows in self.cache[dso]:
            if start <= addr < end:
                rule = "u"
                for loc, r in rows:
                    if loc <= addr:
                        rule = r
                return rule.startswith("c")
        return None


FRAME = re.compile(r"^(\s+)([0-9a-f]+) (.*?) \(([^()]*)\)( \S+:\d+)?$")


def main():
    args = sys.argv[1:]
    dwarf = "--dwarf" in args
    if dwarf:
        args.remove("--dwarf")
    script, stacks, debugdir, out = args[:4]
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import check
    ours = check.stack_blocks(stacks, r"-?\d+/(-?\d+) (\d+\.\d{6}):")
    mods = Modules(debugdir)
    fixed = collections.Counter()
    lines = open(script, errors="replace").read().split("\n")
    res, i = [], 0
    while i < len(lines):
        head = lines[i]
        m = re.search(r"^\S.*?\s(-?\d+)\s+(\d+\.\d{6}):", head)
        if not m:
            res.append(head)
            i += 1
            continue
        key = (m.group(1), m.group(2))
        body = []
        i += 1
        while i < len(lines) and lines[i].strip():
            body.append(lines[i])
            i += 1
        frames = [FRAME.match(l) for l in body]
        user = [k for k, f in enumerate(frames) if f and int(f.group(2), 16) < 1 << 63]
        mine = [f for f in ours.get(key, []) if f[0] < 1 << 63]
        drop = set()
        # signed return addresses: perfport's frame where it is the stripped address
        for n, k in enumerate(user):
            a = int(frames[k].group(2), 16)
            if a >> 48 and n < len(mine) and mine[n][0] - (a & MASK48) in (0, 1):
                body[k] = "%s%x %s (%s)" % (frames[k].group(1), mine[n][0], mine[n][1], mine[n][2])
                fixed["signed"] += 1
        if len(user) >= 2:
            leaf, caller = frames[user[0]], frames[user[1]]
            a0, a1 = int(leaf.group(2), 16), int(caller.group(2), 16)
            if dwarf:
                # (a recursive call's return address is the leaf's pc
                # too, when the leaf had just returned from it: then
                # perf's unwinding goes on past it; from lr, it stops)
                if a1 + 1 == a0 and len(user) == 2 and mods.ra_saved(leaf.group(4), a0):
                    drop.add(user[1])
                    fixed["stale"] += 1
            elif a1 % 4 == 3 and not a1 >> 48:      # lr - 1: taken from lr
                nxt = int(frames[user[2]].group(2), 16) if len(user) > 2 else None
                if nxt == a1 + 1:
                    drop.add(user[1])
                    fixed["twice"] += 1
                elif mods.ra_saved(leaf.group(4), int(leaf.group(2), 16)):
                    drop.add(user[1])
                    fixed["stale"] += 1
        res.append(head)
        res.extend(l for k, l in enumerate(body) if k not in drop)
        if i < len(lines):
            res.append(lines[i])
            i += 1
    with open(out, "w") as f:
        f.write("\n".join(res))
    # perfport's stacks with perf's way of writing DWARF return addresses
    with open(out + ".ours", "w") as f:
        leaf_done = False   # past the leaf's line (and its inlined calls')
        for line in open(stacks, errors="replace"):
            m = FRAME.match(line.rstrip("\n"))
            if not line.strip() or not line.startswith(("\t", " ")):
                leaf_done = False
            elif m and int(m.group(2), 16) < 1 << 63:
                if dwarf and leaf_done:
                    line = "%s%x %s (%s)%s\n" % (m.group(1), int(m.group(2), 16) - 1, m.group(3), m.group(4),
                                                m.group(5) or "")
                leaf_done = leaf_done or m.group(4) != "inlined"
            f.write(line)
    print("perf's own arm64 errors taken out: %s" % (
        ", ".join("%s %d" % kv for kv in sorted(fixed.items())) or "none"))


main()
