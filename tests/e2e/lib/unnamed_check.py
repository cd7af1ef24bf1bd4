#!/usr/bin/env python3
"""Checks of frames perfport could not name (tests/e2e/68-name-later.sh).

  traces NAMED.txt LATER.txt MINPCT
      two `pprof -traces -sample_index=samples` outputs: the export named with
      the binaries at hand, and the one named later by pprof from addresses
      (PPROF_BINARY_PATH); at least MINPCT % of the samples must have the same
      stack of function names in both
  corpus PERFPORT FILE...
      per recording, the distinct unnamed user (module, offset) pairs of the
      samples' own addresses as `perf report --no-children --sort dso,sym`
      shows them (its [.] 0x... rows) and as perfport's folded export names
      the leaves (MODULE+0xOFFSET): the same sets
"""
import collections
import re
import subprocess
import sys


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def traces(path):
    """Counter of stacks (tuples of names, leaf first) by samples."""
    out = collections.Counter()
    value, names = None, []
    for line in open(path, errors="replace"):
        if line.startswith("-----------+"):
            if value is not None:
                out[tuple(names)] += value
            value, names = None, []
            continue
        m = re.match(r"^\s+(\d+)\s{3}(\S.*)$", line)
        if m and value is None:
            value, names = int(m.group(1)), [m.group(2).strip()]
        elif value is not None and line.strip():  # (labels come before the value)
            names.append(line.strip())
    if value is not None:
        out[tuple(names)] += value
    return out


def cmp_traces(named_path, later_path, minpct):
    a, b = traces(named_path), traces(later_path)
    total = sum(a.values())
    same = sum(min(n, b.get(k, 0)) for k, n in a.items())
    if total < 100 or sum(b.values()) != total:
        fail(f"samples: named {total}, named later {sum(b.values())}")
    pct = 100.0 * same / total
    print(f"ok: {same} of {total} samples ({pct:.2f}%) have the same stack of names "
          "named later by pprof as perfport named them")
    if pct < float(minpct):
        diff = [(k[:3], n - b.get(k, 0)) for k, n in a.items() if n > b.get(k, 0)]
        fail(f"{pct:.2f}% < {minpct}%: {sorted(diff, key=lambda x: -x[1])[:4]}")


def perf_pairs(path):
    ev = [e.strip() for e in subprocess.run(["perf", "evlist", "-i", path], capture_output=True,
                                            text=True).stdout.splitlines()
          if e.strip() and not e.startswith(("#", "dummy"))]
    # (a branch stack's file: the samples, not the branches)
    r = subprocess.run(["perf", "report", "-i", path, "--no-children", "--no-branch-stack",
                        "--sort", "dso,sym", "--stdio", "-g", "none"],
                       capture_output=True, text=True)
    if r.returncode or "failed to process" in r.stderr:
        return ev, None  # a file (or record type) this perf cannot read
    out = r.stdout
    pairs = set()
    for line in out.splitlines():
        w = line.split()
        if line.startswith("#") or "[.]" not in w:
            continue
        i = w.index("[.]")
        dso = w[i - 1]
        # anonymous memory: perf's "[JIT] tid N" (by address), perfport's
        # //anon+0xADDRESS
        if i >= 3 and w[i - 3:i - 1] == ["[JIT]", "tid"]:
            dso = "anon"
        if i + 1 < len(w) and re.fullmatch(r"(0x)?[0-9a-f]+", w[i + 1]) and \
                dso not in ("[unknown]", "[kernel.kallsyms]"):
            pairs.add((dso, int(w[i + 1], 16)))
    return ev, pairs


def corpus(perfport, *files):
    bad = 0
    for f in files:
        ev, want = perf_pairs(f)
        name = f.split("corpus/")[-1]
        if want is None:
            print(f"note: {name}: perf cannot read it, not compared")
            continue
        args = [perfport, "export", "-q", "-i", f, "-f", "folded", "-o", "-"]
        if len(ev) > 1:
            args += ["--event", ",".join(ev)]
        r = subprocess.run(args, capture_output=True, text=True)
        got = set()
        for line in r.stdout.splitlines():
            leaf = line.rsplit(" ", 1)[0].split(";")[-1]
            m = re.fullmatch(r"(.*)\+0x([0-9a-f]+)", leaf)
            if m and m.group(1) != "[kernel.kallsyms]":
                got.add((m.group(1), int(m.group(2), 16)))
        # perf names [vdso] frames from this machine's vdso: not compared
        want = {p for p in want if p[0] != "[vdso]"}
        got = {p for p in got if p[0] != "[vdso]"}
        if want != got:
            bad += 1
            print(f"{name}: perf {len(want)}, perfport {len(got)}: only perf "
                  f"{sorted(want - got)[:3]}, only perfport {sorted(got - want)[:3]}")
        else:
            print(f"ok: {name}: {len(want)} distinct unnamed (module, offset) pairs, as perf")
    if bad:
        fail(f"{bad} of {len(files)} recordings' unnamed frames differ from perf report's")


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        sys.exit(2)
    cmd, args = sys.argv[1], sys.argv[2:]
    {"traces": cmp_traces, "corpus": corpus}[cmd](*args)


if __name__ == "__main__":
    main()
