#!/usr/bin/python3
"""inline_cmp.py STACKS PERF_DATA BINARY[=LOCAL] ADDR2LINE MIN_PERCENT

Compares the inline chains of `perfport stacks` (every frame of BINARY, with
the calls inlined at its address) with ADDR2LINE -i -f -C at the same
address (the sample's address for a leaf, the return address - 1 for a
caller), level by level: function name and file:line. Prints the share of
frames that agree and the worst disagreements; exits 1 below MIN_PERCENT.
BINARY is the path the recording names; =LOCAL gives the file to read where
it is elsewhere here (a recording made on another machine).
"""
import collections
import re
import subprocess
import sys


def strip_params(f):
    """A function name without its parameter list (the last balanced
    (...)) and const, as perfport names functions."""
    f = re.sub(r" const$", "", f)
    if not f.endswith(")") or f.endswith("operator()"):
        return f
    depth = 0
    for i in range(len(f) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(f[i], 0)
        if depth == 0:
            return f[:i] if i else f
    return f


def lambdas(f):
    """GNU's {lambda(long)#3} and LLVM's 'lambda1'(long) spelled alike."""
    f = re.sub(r"\{lambda\(([^)]*)\)#(\d+)\}", r"lambda(\1)#\2", f)
    return re.sub(r"'lambda(\d*)'\(([^)]*)\)",
                  lambda m: "lambda(%s)#%d" % (m.group(2), int(m.group(1)) + 2 if m.group(1) else 1), f)


def text_map(data, binary, local):
    """runtime address -> the binary's ELF address, from its executable
    mappings in the recording and its LOAD segments."""
    mm = subprocess.run(["perf", "script", "-i", data, "--show-mmap-events"],
                        capture_output=True, text=True).stdout
    maps = []
    for m in re.finditer(r"PERF_RECORD_MMAP2? .*\[0x([0-9a-f]+)\((0x[0-9a-f]+)\) @ (0x[0-9a-f]+|\d+) "
                         r".*\]: r-xp (\S+)", mm):
        if m.group(4) == binary:
            maps.append((int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 0)))
    segs = []
    for line in subprocess.run(["readelf", "-lW", local], capture_output=True, text=True).stdout.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))

    def vaddr(a):
        for s, n, pg in maps:
            if s <= a < s + n:
                off = a - s + pg
                for o, v, sz in segs:
                    if o <= off < o + sz:
                        return off - o + v
        return None
    return vaddr


def chains(stacks, binary, vaddr):
    """{(ELF address looked up, ((function, file:line), ...)): samples}"""
    out = collections.Counter()
    for block in open(stacks).read().split("\n\n"):
        groups = []          # [address, [(function, file:line)], is_leaf]
        user_seen = False
        for l in block.splitlines()[1:]:
            m = re.match(r"\s*([0-9a-f]+) (.*?)( \(inlined\))?(?: \(([^()]*)\))?(?: (\S+:\d+))?$", l)
            if not m:
                continue
            addr, name, dso, pos = int(m.group(1), 16), m.group(2), m.group(4), m.group(5)
            inlined = m.group(3) is not None
            kernel = dso == "[kernel.kallsyms]"
            fn = re.sub(r"\+0x[0-9a-f]+$", "", name)
            if groups and groups[-1][3]:          # the previous line was an inlined call
                groups[-1][1].append((fn, pos))
                groups[-1][3] = inlined
                continue
            # the first user frame is where the thread was, a leaf; the
            # others are return addresses, looked up at address - 1
            groups.append([addr, [(fn, pos)], not kernel and not user_seen, inlined, dso])
            user_seen = user_seen or not kernel
        for addr, frames, leaf, _, dso in groups:
            if dso != binary and not (frames and dso is None):
                continue
            v = vaddr(addr)
            if v is not None:
                out[(v if leaf else v - 1, tuple(frames))] += 1
    return out


def main():
    stacks, data, binary, a2l, minimum = sys.argv[1:6]
    binary, _, local = binary.partition("=")
    local = local or binary
    vaddr = text_map(data, binary, local)
    got = chains(stacks, binary, vaddr)
    if not got:
        sys.exit("no frames of %s in the stacks" % binary)
    addrs = sorted({a for a, _ in got})
    want = {}
    for a in addrs:
        o = subprocess.run([a2l, "-i", "-f", "-C", "-e", local, "0x%x" % a],
                           capture_output=True, text=True).stdout.splitlines()
        want[a] = [(lambdas(strip_params(o[k])), re.sub(r" \(discriminator \d+\)", "", o[k + 1]).split("/")[-1])
                   for k in range(0, len(o) - 1, 2)]
    ok = total = 0
    bad = collections.Counter()
    for (a, chain), n in got.items():
        ours = [(lambdas(f), (p or "??:0").split("/")[-1]) for f, p in chain]
        for k in range(max(len(ours), len(want[a]))):
            total += n
            o = ours[k] if k < len(ours) else None
            w = want[a][k] if k < len(want[a]) else None
            # an inlined lambda: perfport names it as the demangler does
            # (main::{lambda(long)#3}::operator()), addr2line by its bare
            # DWARF name; 61-inline checks the lambda's number
            if o and w and w[0] == "operator()" and re.search(r"#\d+::operator\(\)$", o[0]):
                o = (w[0], o[1])
            if o == w:
                ok += n
            else:
                bad[(a, k, o, w)] += n
    share = 100.0 * ok / total
    print("%d of %d frames (%.2f%%) agree with %s -i, at %d addresses" % (ok, total, share, a2l, len(addrs)))
    for (a, k, o, w), n in bad.most_common(8):
        print("  %d x 0x%x level %d: perfport %s, %s %s" % (n, a, k, o, a2l, w))
    if share < float(minimum):
        sys.exit("below %s%%" % minimum)


main()
