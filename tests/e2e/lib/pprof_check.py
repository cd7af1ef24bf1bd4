#!/usr/bin/python3
"""Check a pprof profile, decoded to text by protoc
(--decode=perftools.profiles.Profile), against perfport report --json.

usage: pprof_check.py DECODED.txt REPORT.json [BUILDIDS.txt]
  BUILDIDS.txt  perf buildid-list output: "<id> <path>" lines
"""
import ast
import json
import re
import sys

TOKEN = re.compile(r'\s*(?:([A-Za-z_][A-Za-z0-9_]*)\s*(\{|:\s*("(?:[^"\\]|\\.)*"|[^\s]+))|(\}))')


def parse(text):
    """protoc's text format into nested dicts of lists."""
    root, stack, pos = {}, [], 0
    cur = root
    while True:
        m = TOKEN.match(text, pos)
        if not m:
            if text[pos:].strip():
                sys.exit("cannot parse decoded pprof near: %r" % text[pos:pos + 60])
            break
        pos = m.end()
        if m.group(4):
            cur = stack.pop()
            continue
        name = m.group(1)
        if m.group(2) == "{":
            child = {}
            cur.setdefault(name, []).append(child)
            stack.append(cur)
            cur = child
        else:
            v = m.group(3)
            if v.startswith('"'):
                v = ast.literal_eval("b" + v).decode("utf-8", "replace")
            elif re.fullmatch(r"-?\d+", v):
                v = int(v)
            cur.setdefault(name, []).append(v)
    return root


def one(d, k, default=0):
    return d.get(k, [default])[0]


def main():
    pb = parse(open(sys.argv[1]).read())
    rep = json.load(open(sys.argv[2]))
    st = pb["string_table"]
    if st[0] != "":
        sys.exit("string_table[0] is not empty")
    types = [(st[one(t, "type")], st[one(t, "unit")]) for t in pb["sample_type"]]
    print("sample types:", ", ".join("%s/%s" % t for t in types))
    totals = rep["totals"]
    want = {"samples": totals.get("on-cpu", {}).get("count", 0)}
    for name, c in totals.items():
        want[name.replace("-", "_")] = c["ns"]
        if name not in ("on-cpu", "idle"):     # off-CPU intervals, counted
            want[name.replace("-", "_") + "_intervals"] = c["count"]
    sums = [0] * len(types)
    for s in pb.get("sample", []):
        vals = s["value"]
        if len(vals) != len(types):
            sys.exit("a sample has %d values for %d types" % (len(vals), len(types)))
        for i, v in enumerate(vals):
            sums[i] += v
    for (t, u), got in zip(types, sums):
        w = want.get(t)
        print("  %-14s %-12s %15d  tree %15s" % (t, u, got, w))
        if w is None or got != w:
            sys.exit("sample type %s: total %d, the tree's %s" % (t, got, w))
    missing = set(want) - {t for t, _ in types}
    if missing:
        sys.exit("counters with data but no sample type: %s" % sorted(missing))
    # functions and lines against the tree's frames
    funcs = {one(f, "id"): st[one(f, "name")] for f in pb.get("function", [])}
    names = set(funcs.values())
    tree_names = {f["function"] for f in rep["frames"]}
    lost = tree_names - names
    if lost:
        sys.exit("tree functions missing from pprof: %s" % sorted(lost)[:10])
    locs = {one(l, "id"): l for l in pb.get("location", [])}
    for s in pb.get("sample", []):
        for lid in s["location_id"]:
            if lid not in locs:
                sys.exit("sample names location %d, which does not exist" % lid)
    lines = [ln for l in locs.values() for ln in l.get("line", [])]
    if any(one(ln, "function_id") not in funcs for ln in lines):
        sys.exit("a line names a function that does not exist")
    if not any(one(ln, "line") > 0 for ln in lines):
        sys.exit("no line numbers")
    # addresses: every location of a mapping lies inside it
    maps = {one(m, "id"): m for m in pb.get("mapping", [])}
    addressed = 0
    for l in locs.values():
        a, m = one(l, "address"), maps.get(one(l, "mapping_id"))
        if m is None:
            continue
        if not one(m, "memory_start") <= a < one(m, "memory_limit"):
            sys.exit("location %d at %#x, outside its mapping %#x-%#x" %
                     (one(l, "id"), a, one(m, "memory_start"), one(m, "memory_limit")))
        addressed += a > 0
    if not addressed:
        sys.exit("no location has an address")
    inl = sum(1 for l in locs.values() if len(l.get("line", [])) > 1)
    print("%d samples, %d locations (%d with inlined lines), %d functions, %d mappings" %
          (len(pb.get("sample", [])), len(locs), inl, len(funcs), len(pb.get("mapping", []))))
    if one(pb, "time_nanos") <= 0 or one(pb, "duration_nanos") <= 0:
        sys.exit("no time or duration")
    if len(sys.argv) > 3:
        ids = {}
        for line in open(sys.argv[3]):
            f = line.split(None, 1)
            if len(f) == 2:
                ids[f[1].strip()] = f[0]
        checked = 0
        for m in pb.get("mapping", []):
            path = st[one(m, "filename")]
            if path in ids:
                checked += 1
                if st[one(m, "build_id")] != ids[path]:
                    sys.exit("mapping %s: build id %s, perf says %s" %
                             (path, st[one(m, "build_id")], ids[path]))
        print("%d mapping build ids equal perf buildid-list's" % checked)
        if not checked:
            sys.exit("no mapping to compare with perf buildid-list")
    print("ok")


if __name__ == "__main__":
    main()
