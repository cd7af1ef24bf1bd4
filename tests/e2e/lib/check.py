#!/usr/bin/python3
"""Compare perfport's view of a recording with perf's own tools.

  check.py counts  INFO.json  SCRIPT.txt   per-event and per-thread sample counts
                                           (SCRIPT from: perf script -F pid,tid,event)
  check.py order   DUMP.txt   SCRIPT.txt   the sequence of samples in time order
                                           (SCRIPT from: perf script -F pid,tid,time,event --ns)
  check.py stats   INFO.json  STATS.txt    per-event counts against perf report --stats
  check.py json    INFO.json  KEY=VALUE... fields of perfport info --json
  check.py frames  STACKS.txt SCRIPT.txt MIN%  function names frame by frame, user
                                           frames (and kernel frames: k=MIN%)
                                           (SCRIPT from: perf script -F comm,tid,time,event,ip,sym,dso)
  check.py reach   STACKS.txt COMM MIN% NAME...  samples of COMM whose stack reaches
                                           one of NAME (main, start_thread...)
  check.py perfparser STACKS.txt EXPECTED.txt MIN%  user function sequences against
                                           perfparser's decoded output (inlined frames
                                           left out: perfport does not expand them yet)
  check.py addrs   STACKS.txt SCRIPT.txt [COMM]  user frame addresses equal perf script's up to
                                           one constant load offset (perf prints offsets
                                           into binaries it cannot find)
                                           (SCRIPT from: perf script -F time,ip)
  check.py jitmap  STACKS.txt PID MAP MIN%  frames of PID's threads inside an entry of
                                           the JIT's own perf map MAP carry that entry's
                                           name (return addresses looked up at - 1;
                                           frames in mapped files are left out)
  check.py tpfields DUMP.txt  SCRIPT.txt   sched_switch fields, sample by sample
                                           (SCRIPT from: perf script -F time,trace --ns)

Exits 1 with a description of the first differences.
"""
import collections
import json
import re
import sys


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


SCRIPT_LINE = re.compile(r"^\s*(-?\d+)/(-?\d+)\s+(?:(\d+\.\d+):\s+)?(\S.*?):\s*$")


def parse_script(path):
    rows = []
    with open(path, errors="replace") as f:
        for line in f:
            m = SCRIPT_LINE.match(line)
            if m:
                pid, tid, t, ev = m.groups()
                ns = None
                if t:
                    sec, frac = t.split(".")
                    ns = int(sec) * 10**9 + int(frac.ljust(9, "0"))
                rows.append((int(pid), int(tid), ns, ev))
    return rows


def counts(info_path, script_path):
    info = json.load(open(info_path))
    rows = parse_script(script_path)
    per_event = collections.Counter(r[3] for r in rows)
    mine_events = {e["name"]: e["samples"] for e in info["events"] if e["samples"]}
    if dict(per_event) != mine_events:
        fail(f"per-event counts differ: perf script {dict(per_event)} perfport {mine_events}")
    per_tid = collections.Counter(r[1] for r in rows)
    mine_tid = {t["tid"]: t["samples"] for t in info["threads"] if t["samples"]}
    if dict(per_tid) != mine_tid:
        diff = {k: (per_tid.get(k), mine_tid.get(k)) for k in set(per_tid) | set(mine_tid)
                if per_tid.get(k) != mine_tid.get(k)}
        fail(f"per-thread counts differ (tid: perf, perfport): {dict(list(diff.items())[:10])}")
    if info["samples"] != len(rows):
        fail(f"total samples: perf script {len(rows)}, perfport {info['samples']}")
    print(f"ok: {len(rows)} samples, {len(per_event)} events, {len(per_tid)} threads agree")


DUMP_LINE = re.compile(r"^(\d+)\.(\d{9}) SAMPLE (-?\d+)/(-?\d+) .*?event=(\S+) ")


def order(dump_path, script_path):
    mine = []
    with open(dump_path) as f:
        for line in f:
            m = DUMP_LINE.match(line)
            if m:
                sec, frac, pid, tid, ev = m.groups()
                mine.append((int(sec) * 10**9 + int(frac), int(tid), ev))
    theirs = [(r[2], r[1], r[3]) for r in parse_script(script_path)]
    if len(mine) != len(theirs):
        fail(f"sample count differs: perf script {len(theirs)}, perfport dump {len(mine)}")
    # Samples with equal times may come in either order; compare groups.
    def groups(seq):
        out = []
        for t, grp in __import__("itertools").groupby(seq, key=lambda x: x[0]):
            out.append(sorted(grp))
        return out
    times = [x[0] for x in mine]
    if times != sorted(times):
        bad = next(i for i in range(1, len(times)) if times[i] < times[i - 1])
        fail(f"perfport dump is not in time order at sample {bad}: {times[bad-1]} then {times[bad]}")
    g1, g2 = groups(mine), groups(theirs)
    if g1 != g2:
        for i, (a, b) in enumerate(zip(g1, g2)):
            if a != b:
                fail(f"sequence differs at group {i}: perf {b[:3]} perfport {a[:3]}")
        fail("sequences differ in length of groups")
    print(f"ok: {len(mine)} samples in the same time order as perf script")


def parse_stats(path):
    """Per-event SAMPLE counts from perf report --stats, in order."""
    events, cur = [], None
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"^(\S.*) stats:\s*$", line)
            if m:
                cur = m.group(1)
                continue
            m = re.match(r"^\s+SAMPLE events:\s+(\d+)", line)
            if m and cur is not None and cur != "Aggregated":
                events.append((cur, int(m.group(1))))
                cur = None
    return events


def stats(info_path, stats_path):
    info = json.load(open(info_path))
    theirs = [n for _, n in parse_stats(stats_path)]
    mine = [e["samples"] for e in info["events"] if e["samples"]]
    if theirs != mine:
        fail(f"per-event sample counts: perf report --stats {theirs}, perfport {mine}")
    print(f"ok: per-event counts {mine} agree with perf report --stats")


def check_json(info_path, *pairs):
    info = json.load(open(info_path))
    for pair in pairs:
        key, want = pair.split("=", 1)
        val = info
        for part in key.split("."):
            val = val[int(part)] if isinstance(val, list) else val.get(part)
        op = "=="
        if want.startswith(">"):
            op, want = ">", want[1:]
        got = str(val).lower() if isinstance(val, bool) else str(val)
        if op == ">" and not (val is not None and float(val) > float(want)):
            fail(f"{key} is {val}, expected > {want}")
        if op == "==" and got != want:
            fail(f"{key} is {got!r}, expected {want!r}")
    print("ok:", " ".join(pairs))


TP_KEYS = ("prev_pid", "prev_prio", "next_pid", "next_prio")


def tp_rows(path, time_re):
    rows = []
    with open(path, errors="replace") as f:
        for line in f:
            m = re.search(time_re, line)
            if not m or "next_pid=" not in line:
                continue
            vals = []
            for k in TP_KEYS:
                v = re.search(r"\b%s=(-?\d+)" % k, line)
                vals.append(int(v.group(1)) if v else None)
            rows.append((m.group(1),) + tuple(vals))
    return sorted(rows)


def tpfields(dump_path, script_path):
    mine = tp_rows(dump_path, r"^(\d+\.\d{9}) SAMPLE .*event=sched:sched_switch")
    theirs = tp_rows(script_path, r"^\s*(\d+\.\d{9}):")
    if not theirs:
        fail("perf script printed no sched_switch fields")
    if mine != theirs:
        diff = [(a, b) for a, b in zip(mine, theirs) if a != b][:3]
        fail(f"{len(mine)} vs {len(theirs)} switches; first differences (perfport, perf): {diff}")
    print(f"ok: {len(mine)} sched_switch samples: {', '.join(TP_KEYS)} agree with perf script")


FRAME = re.compile(r"^\s+([0-9a-f]+) (.*?)(?:\+0x[0-9a-f]+)? \(([^()]*)\)(?: \S+:\d+)?$")


def stack_blocks(path, header_re):
    """{(tid, time): [frames]} with frames as (addr, name, dso)."""
    blocks, key = {}, None
    with open(path, errors="replace") as f:
        for line in f:
            if not line.strip():
                key = None
                continue
            if not line.startswith("\t") and not line.startswith("  "):
                m = re.search(header_re, line)
                key = (m.group(1), m.group(2)) if m else None
                if key:
                    blocks.setdefault(key, [])
                continue
            if key is not None:
                m = FRAME.match(line)
                if not m:
                    continue
                fr = (int(m.group(1), 16), m.group(2), m.group(3))
                # One frame per address, the outermost: inlined calls are
                # shown by perf in DWARF mode only, and sometimes without the
                # function that contains them.
                if blocks[key] and blocks[key][-1][0] == fr[0] and \
                        (blocks[key][-1][2] == "inlined"):
                    blocks[key][-1] = fr
                elif blocks[key] and blocks[key][-1] == fr:
                    pass  # perf repeats a syscall's user frame in DWARF mode
                else:
                    blocks[key].append(fr)
    return blocks


def frames(ours_path, perf_path, *mins):
    ours = stack_blocks(ours_path, r"-?\d+/(-?\d+) (\d+\.\d{6}):")
    perf = stack_blocks(perf_path, r"^\S.*?\s(-?\d+)\s+(\d+\.\d{6}):")
    common = set(ours) & set(perf)
    if len(common) < 0.99 * len(perf) or not perf:
        fail(f"samples: perf {len(perf)}, perfport {len(ours)}, common {len(common)}")
    stats = {"user": [0, 0], "kernel": [0, 0]}
    bad = collections.Counter()
    for k in common:
        a, b = ours[k], perf[k]
        if len(a) != len(b):
            bad[("depth", len(a), len(b))] += 1
        for x, y in zip(a, b):
            kind = "kernel" if y[0] >= 1 << 63 else "user"
            stats[kind][1] += 1
            # glibc's internal __GI_ aliases name the same function; perf keeps
            # symbol versions (@@GLIBC_2.17), perfport drops them
            def norm(n):
                return re.sub(r"@.*$", "", re.sub(r"^__GI_", "", n))
            # what no symbol covers, perf calls [unknown]; perfport names it
            # by its function's address in the module: MODULE+0xSTART
            addr_named = y[1] == "[unknown]" and re.fullmatch(
                re.escape(x[2].rsplit("/", 1)[-1]) + r"\+0x[0-9a-f]+", x[1])
            if x[1] == y[1] or norm(x[1]) == norm(y[1]) or addr_named:
                stats[kind][0] += 1
            else:
                bad[(x[1], y[1])] += 1
    want = {"user": float(mins[0]) if mins else 99.0, "kernel": None}
    for m in mins[1:]:
        if m.startswith("k="):
            want["kernel"] = float(m[2:])
    msg = []
    for kind, (ok, total) in stats.items():
        pct = 100.0 * ok / total if total else 100.0
        msg.append(f"{kind} {ok}/{total} = {pct:.2f}%")
        if want[kind] is not None and pct < want[kind]:
            fail(f"{kind} frame names agree for {pct:.2f}% < {want[kind]}%; "
                 f"most common differences (perfport, perf): {bad.most_common(5)}")
    print("ok: frame names agree with perf script:", ", ".join(msg),
          f"(top differences: {bad.most_common(3)})" if bad else "")


def reach(path, comm, minpct, *names):
    blocks = stack_blocks(path, r"^" + re.escape(comm) + r" -?\d+/(-?\d+) (\d+\.\d{6}):")
    if not blocks:
        fail(f"no samples of {comm}")
    ok = sum(1 for fr in blocks.values() if any(f[1] in names for f in fr))
    pct = 100.0 * ok / len(blocks)
    if pct < float(minpct):
        short = [fr for fr in blocks.values() if not any(f[1] in names for f in fr)][:3]
        fail(f"{ok}/{len(blocks)} = {pct:.1f}% of {comm} samples reach {names}; e.g. {short}")
    print(f"ok: {ok}/{len(blocks)} = {pct:.1f}% of {comm} samples reach {'/'.join(names)}")


PP_HEADER = re.compile(r"^\S.*\t(\d+)\t(\d+)\t(\d+)\.(\d{9})\s*$")
PP_FRAME = re.compile(r"^\t[0-9a-f]+ [0-9a-f]+\t[0-9a-f]+ [0-9a-f]+\t(.*)$")


def perfparser_expected(path):
    """{time_us: [(sym_start, sym_size)]} of the user, non-inlined frames of
    perfparser's *.expected.txt (name-independent: demangling styles differ)."""
    out, key = {}, None
    with open(path, errors="replace") as f:
        for line in f:
            m = PP_HEADER.match(line)
            if m:
                key = f"{m.group(3)}.{m.group(4)[:6]}"
                out[key] = []
                continue
            fields = line.rstrip("\n").split("\t")
            if key is None or len(fields) < 4:
                continue
            sm = re.fullmatch(r"([0-9a-f]+) ([0-9a-f]+)", fields[-2])
            rest = fields[-1].rstrip()
            if not sm or rest.endswith("(inlined)") or "[kernel" in rest:
                continue
            out[key].append((int(sm.group(1), 16), int(sm.group(2), 16)))
    return out


def perfparser(ours_path, expected_path, minpct):
    want = perfparser_expected(expected_path)
    ours = {}
    for (tid, t), frames in stack_blocks(ours_path, r"-?\d+/(-?\d+) (\d+\.\d{6}):").items():
        ours[t] = [f[0] for f in frames if f[0] < 1 << 63]
    common = [k for k in want if k in ours and want[k]]
    if not common:
        fail(f"no samples in common (expected {len(want)}, perfport {len(ours)})")

    def dedup(seq):  # perfparser lists an LBR leaf twice
        return [x for i, x in enumerate(seq) if i == 0 or x != seq[i - 1]]
    want = {k: dedup(v) for k, v in want.items()}

    def same(pcs, syms):
        if len(pcs) != len(syms):
            return False
        # a return address may sit just past its function's end
        return all(start <= pc <= start + size for pc, (start, size) in zip(pcs, syms))
    ok = sum(1 for k in common if same(ours[k], want[k]))
    pct = 100.0 * ok / len(common)
    if pct < float(minpct):
        bad = [(k, [hex(x) for x in ours[k]], [(hex(a), b) for a, b in want[k]])
               for k in common if not same(ours[k], want[k])][:2]
        fail(f"{ok}/{len(common)} = {pct:.1f}% of user stacks match; e.g. {bad}")
    print(f"ok: {ok}/{len(common)} = {pct:.1f}% of samples unwind through the same functions as perfparser")


def addrs(ours_path, perf_path, comm=None):
    hdr = r"-?\d+/(-?\d+) (\d+\.\d{6}):" if not comm else \
        r"^" + re.escape(comm) + r" -?\d+/(-?\d+) (\d+\.\d{6}):"
    ours = {t: [f[0] for f in fr if f[0] < 1 << 63]
            for (tid, t), fr in stack_blocks(ours_path, hdr).items()}
    perf, key = {}, None
    with open(perf_path, errors="replace") as f:
        for line in f:
            m = re.match(r"^\s*(\d+\.\d{6})\d*:", line)
            if m:
                key = m.group(1)
                perf[key] = []
                continue
            m = re.match(r"^\s+([0-9a-f]+)\b", line)
            if m and key is not None and int(m.group(1), 16) < 1 << 63:
                perf[key].append(int(m.group(1), 16))
    common = [k for k in perf if k in ours and perf[k]]
    if not common:
        fail(f"no samples in common (perf {len(perf)}, perfport {len(ours)})")
    # the load offset of the profiled binary: the most common difference
    base = collections.Counter(ours[k][0] - perf[k][0] for k in common if ours[k]).most_common(1)[0][0]
    bad = [k for k in common if [a - base for a in ours[k]] != perf[k]]
    if len(bad) > 0.10 * len(common):
        fail(f"{len(bad)} of {len(common)} user stacks differ, e.g. {bad[0]}: "
             f"perfport {[hex(a - base) for a in ours[bad[0]]]} perf {[hex(a) for a in perf[bad[0]]]}")
    print(f"ok: {len(common) - len(bad)}/{len(common)} user stacks have perf's addresses "
          f"(load offset {hex(base)})")


def plt(ours_path, perf_path, objdump_path, binary):
    """Samples whose leaf perf places (by address) in a PLT entry of BINARY,
    as objdump -d names the entries ("<labs@plt>:"), are named so by
    perfport. (perf 6.1 names them by the symbol before the PLT, _init.)"""
    entries = {}
    for line in open(objdump_path, errors="replace"):
        m = re.match(r"^([0-9a-f]+) <(\S+@plt)>:$", line.strip())
        if m:
            entries[int(m.group(1), 16)] = m.group(2)
    if not entries:
        fail(f"objdump shows no PLT entries in {binary}")
    ours = stack_blocks(ours_path, r"-?\d+/(-?\d+) (\d+\.\d{6}):")
    perf = stack_blocks(perf_path, r"^\S.*?\s(-?\d+)\s+(\d+\.\d{6}):")
    seen, bad = collections.Counter(), []
    for k in set(ours) & set(perf):
        if not perf[k] or not ours[k] or not perf[k][0][2].endswith("/" + binary):
            continue
        addr = perf[k][0][0]
        want = [n for a, n in entries.items() if a <= addr < a + 16]
        if not want:
            continue
        seen[want[0]] += 1
        if ours[k][0][1] != want[0]:
            bad.append((k, ours[k][0][1], want[0]))
    if not seen:
        fail("no sample in a PLT entry")
    if bad:
        fail(f"{len(bad)} samples in PLT entries misnamed, e.g. {bad[:3]}")
    print("ok: samples in PLT entries named as objdump names them:", dict(seen))


def jitmap(ours_path, pid, map_path, minimum):
    entries = []
    with open(map_path, errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split(" ", 2)
            if len(parts) == 3:
                try:
                    entries.append((int(parts[0], 16), int(parts[1], 16), parts[2]))
                except ValueError:
                    pass
    entries.sort()
    starts = [e[0] for e in entries]
    import bisect
    head = re.compile(r"^\S.*? (-?\d+)/(-?\d+) \d+\.\d{6}:")
    good = total = 0
    bad = collections.Counter()
    pid_of_block, first = None, False
    with open(ours_path, errors="replace") as f:
        for line in f:
            if not line.strip():
                pid_of_block = None
                continue
            m = head.match(line)
            if m:
                pid_of_block, first = m.group(1), True
                continue
            if pid_of_block != pid:
                continue
            fm = FRAME.match(line)
            if not fm:
                continue
            addr = int(fm.group(1), 16) - (0 if first else 1)
            first = False
            mod = fm.group(3)
            if mod.startswith("/") and not mod.startswith("//anon") and not mod.startswith("/memfd:"):
                continue  # in a file: named from it (node's map repeats its builtins)
            i = bisect.bisect_right(starts, addr) - 1
            if i < 0 or addr >= entries[i][0] + entries[i][1]:
                continue
            total += 1
            name = re.sub(r"\+0x[0-9a-f]+$", "", fm.group(2))
            if name == entries[i][2]:
                good += 1
            else:
                bad[(name, entries[i][2])] += 1
    if total < 20:
        fail(f"pid {pid}: only {total} frames in JIT code of {map_path}")
    share = 100.0 * good / total
    print(f"pid {pid}: {good} of {total} JIT frames named as its perf map names them ({share:.1f}%)")
    if share < float(minimum):
        fail(f"pid {pid}: {share:.2f}% < {minimum}%: {bad.most_common(4)}")


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        sys.exit(2)
    cmd, args = sys.argv[1], sys.argv[2:]
    {"counts": counts, "order": order, "stats": stats, "json": check_json,
     "tpfields": tpfields, "frames": frames, "reach": reach, "perfparser": perfparser,
     "addrs": addrs, "plt": plt, "jitmap": jitmap}[cmd](*args)


if __name__ == "__main__":
    main()
