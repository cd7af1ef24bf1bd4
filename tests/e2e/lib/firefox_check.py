#!/usr/bin/python3
"""Check a Firefox Profiler processed profile (version 70) as perfport
writes it, structurally (the table shapes of the profiler's
src/types/profile.ts: every column as long as its table, every index in
range, stacks in topological order) and against perfport's own tree:
per thread and state, the sample weights equal the tree's time; per
state, the stacks (root first, the state frame aside) equal the folded
export's; one interval marker per off-CPU interval.

usage: firefox_check.py PROFILE(.json or .json.gz) TREE_JSON FOLDED_DIR
Prints a summary line; exits non-zero with the first difference.
"""
import collections
import gzip
import json
import sys

STATE_CATS = {"Preempted": "preempted", "Lock": "lock", "I/O": "io", "Sleep": "sleep",
              "Timed sleep": "timed-sleep", "Idle": "idle"}


def fail(msg):
    sys.exit("firefox: " + msg)


def columns(table, names, where):
    n = table.get("length")
    if not isinstance(n, int):
        fail("%s: no length" % where)
    for c in names:
        if c not in table:
            fail("%s: no column %s" % (where, c))
        if len(table[c]) != n:
            fail("%s.%s: %d values, length %d" % (where, c, len(table[c]), n))
    return n


def in_range(v, n, where, nullable=False, minus_one=False):
    if v is None and nullable:
        return
    if v == -1 and minus_one:
        return
    if not isinstance(v, int) or not 0 <= v < n:
        fail("%s: %r out of range [0, %d)" % (where, v, n))


def main():
    path, tree_path, folded_dir = sys.argv[1:4]
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    prof = json.loads(raw)
    meta = prof["meta"]
    if meta.get("preprocessedProfileVersion") != 70:
        fail("preprocessedProfileVersion %r" % meta.get("preprocessedProfileVersion"))
    for k in ("interval", "startTime", "processType", "product", "stackwalk", "version",
              "categories", "markerSchema"):
        if k not in meta:
            fail("meta.%s missing" % k)
    cats = meta["categories"]
    for c in cats:
        if set(c) != {"name", "color", "subcategories"} or not c["subcategories"]:
            fail("category %r" % c)
    sh = prof["shared"]
    strings = sh["stringArray"]
    ns = columns(sh["stackTable"], ("frame", "prefixOffset"), "stackTable")
    nf = columns(sh["frameTable"], ("address", "lib", "inlineDepth", "category", "subcategory",
                                    "func", "nativeSymbol", "innerWindowID", "line", "column",
                                    "originalLocation"), "frameTable")
    nfn = columns(sh["funcTable"], ("name", "isJS", "relevantForJS", "resource", "source",
                                    "lineNumber", "columnNumber", "originalLocation"), "funcTable")
    nr = columns(sh["resourceTable"], ("name", "host", "type"), "resourceTable")
    nsrc = columns(sh["sources"], ("id", "filename", "startLine", "startColumn", "sourceMapURL",
                                   "content"), "sources")
    columns(sh["nativeSymbols"], ("libIndex", "address", "name", "functionSize"), "nativeSymbols")
    columns(sh["sourceLocationTable"], ("source", "line", "column"), "sourceLocationTable")
    if "lib" in sh["resourceTable"]:
        fail("resourceTable.lib: gone in version 70")
    libs = prof["libs"]
    for lib in libs:
        for k in ("arch", "name", "path", "debugName", "debugPath", "breakpadId", "codeId"):
            if k not in lib:
                fail("lib without %s" % k)
    for i in range(ns):
        in_range(sh["stackTable"]["frame"][i], nf, "stackTable.frame[%d]" % i)
        off = sh["stackTable"]["prefixOffset"][i]
        if not isinstance(off, int) or not 0 <= off <= i:
            fail("stackTable.prefixOffset[%d] = %r" % (i, off))
    ft = sh["frameTable"]
    for i in range(nf):
        in_range(ft["func"][i], nfn, "frameTable.func[%d]" % i)
        in_range(ft["lib"][i], len(libs), "frameTable.lib[%d]" % i, minus_one=True)
        in_range(ft["category"][i], len(cats), "frameTable.category[%d]" % i, nullable=True)
    fn = sh["funcTable"]
    for i in range(nfn):
        in_range(fn["name"][i], len(strings), "funcTable.name[%d]" % i)
        in_range(fn["resource"][i], nr, "funcTable.resource[%d]" % i, minus_one=True)
        in_range(fn["source"][i], nsrc, "funcTable.source[%d]" % i, nullable=True)
    for i in range(nr):
        in_range(sh["resourceTable"]["name"][i], len(strings), "resourceTable.name[%d]" % i)
    for i in range(nsrc):
        in_range(sh["sources"]["filename"][i], len(strings), "sources.filename[%d]" % i)

    def frames_of(stack):
        out = []
        while True:
            out.append(sh["stackTable"]["frame"][stack])
            off = sh["stackTable"]["prefixOffset"][stack]
            if off == 0:
                return out[::-1]
            stack -= off

    tree = json.load(open(tree_path))
    threads = {t["tid"]: t for t in tree["threads"]}
    by_state = collections.defaultdict(collections.Counter)  # counter -> folded stack -> ns
    n_samples = n_markers = 0
    seen_tids = set()
    for th in prof["threads"]:
        for k in ("processType", "processStartupTime", "registerTime", "pausedRanges", "name",
                  "isMainThread", "pid", "tid", "samples", "markers"):
            if k not in th:
                fail("thread without %s" % k)
        tid = th["tid"]
        if tid not in threads or tid in seen_tids:
            fail("thread %r: not one thread of the recording" % tid)
        seen_tids.add(tid)
        t = threads[tid]
        # a thread whose comm the recording never gave is named "[unknown]"
        name = t["comm"] if t["comm"] is not None else "[unknown]"
        if (th["pid"], th["name"], th["isMainThread"]) != (str(t["pid"]), name, t["pid"] == t["tid"]):
            fail("thread %d: pid %r name %r main %r" % (tid, th["pid"], th["name"], th["isMainThread"]))
        smp = th["samples"]
        n = columns(smp, ("stack", "time", "weight", "threadCPUDelta"), "thread %d samples" % tid)
        if smp["weightType"] != "tracing-ms":
            fail("weightType %r" % smp["weightType"])
        if smp["time"] != sorted(smp["time"]):
            fail("thread %d: samples out of time order" % tid)
        got = collections.Counter()
        counts = collections.Counter()
        for i in range(n):
            st = smp["stack"][i]
            in_range(st, ns, "thread %d sample %d stack" % (tid, i))
            frames = frames_of(st)
            leaf_cat = cats[ft["category"][frames[-1]]]["name"]
            state = STATE_CATS.get(leaf_cat, "on-cpu")
            names = [strings[fn["name"][ft["func"][f]]] for f in frames]
            if state != "on-cpu":
                if names[-1] not in ("[off-CPU: %s]" % state, "[idle]"):
                    fail("thread %d: a %s sample ends in %r" % (tid, state, names[-1]))
                names = names[:-1]
            w = round(smp["weight"][i] * 1e6)
            got[state] += w
            counts[state] += 1
            by_state[state][";".join(names)] += w
        for c, v in t["counters"].items():
            if (got[c], counts[c]) != (v["ns"], v["count"]):
                fail("thread %d %s: %d ns in %d samples, the tree's %d in %d" % (
                    tid, c, got[c], counts[c], v["ns"], v["count"]))
        extra = set(got) - set(t["counters"])
        if extra:
            fail("thread %d: samples of %s, which the tree has none of" % (tid, sorted(extra)))
        mk = th["markers"]
        m = columns(mk, ("data", "name", "startTime", "endTime", "phase", "category"),
                    "thread %d markers" % tid)
        want = sum(v["count"] for c, v in t["counters"].items() if c not in ("on-cpu", "idle"))
        if m != want:
            fail("thread %d: %d markers, %d off-CPU intervals" % (tid, m, want))
        for i in range(m):
            d = mk["data"][i]
            if d.get("type") != "OffCPU" or mk["phase"][i] != 1 or mk["endTime"][i] < mk["startTime"][i]:
                fail("thread %d marker %d: %r" % (tid, i, d))
            in_range(d["cause"]["stack"], ns, "marker stack")
        n_samples += n
        n_markers += m
    missing = {tid for tid, t in threads.items() if t["counters"]} - seen_tids
    if missing:
        fail("threads with samples but no track: %s" % sorted(missing))
    for state, stacks in by_state.items():
        folded = collections.Counter()
        with open("%s/%s.folded" % (folded_dir, state)) as f:
            for line in f:
                s, _, v = line.rstrip("\n").rpartition(" ")
                folded[s] += int(v)
        if +folded != +stacks:
            d = set(folded.items()) ^ set(stacks.items())
            fail("%s: stacks differ from the folded export: %s" % (state, sorted(d)[:3]))
    print("firefox ok: %d threads, %d samples, %d markers, %d stacks, %d frames" % (
        len(prof["threads"]), n_samples, n_markers, ns, nf))


if __name__ == "__main__":
    main()
