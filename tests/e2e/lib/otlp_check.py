#!/usr/bin/python3
"""Decode OpenTelemetry profiles with the real opentelemetry-proto messages
(tests/proto/opentelemetry-proto, compiled by protoc for Debian's
python3-protobuf) and check them against perfport's own tree.

usage: otlp_check.py GEN FILE|- ENCODING TREE_JSON FOLDED_DIR [EXPECT...]
  GEN         a directory for protoc's Python output (made if missing)
  FILE        the profiles: protobuf (ProfilesData or, the same bytes, an
              ExportProfilesServiceRequest) or OTLP/JSON
  ENCODING    protobuf | json
  TREE_JSON   perfport report --json of the same recording
  FOLDED_DIR  COUNTER.folded per counter: perfport export -f folded
              -O annotate=false -O value=ns -O counter=COUNTER
  EXPECT      key=value resource attributes that must be there
Prints a one-line summary; exits non-zero with the first difference.
"""
import base64
import collections
import json
import os
import subprocess
import sys

PROTO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../proto/opentelemetry-proto")


def compile_protos(gen):
    """protoc --python_out for the four files the profiles signal needs."""
    if not os.path.exists(os.path.join(gen, "opentelemetry")):
        os.makedirs(gen, exist_ok=True)
        files = []
        for d, _, names in os.walk(os.path.join(PROTO, "opentelemetry")):
            files += [os.path.relpath(os.path.join(d, n), PROTO) for n in names if n.endswith(".proto")]
        subprocess.run(["protoc", "--python_out=" + gen, "-I", PROTO] + sorted(files), check=True)
    sys.path.insert(0, gen)


def load(gen, data, encoding):
    """The ExportProfilesServiceRequest in @data, as a receiver reads it."""
    compile_protos(gen)
    from google.protobuf import json_format
    from opentelemetry.proto.collector.profiles.v1development import profiles_service_pb2 as svc
    req = svc.ExportProfilesServiceRequest()
    if encoding == "protobuf":
        req.ParseFromString(data)
        return req
    # OTLP/JSON: proto3's mapping, but trace and span ids in hex (not base64)
    doc = json.loads(data)
    for link in doc.get("dictionary", {}).get("linkTable", []):
        for k in ("traceId", "spanId"):
            if k in link:
                link[k] = base64.b64encode(bytes.fromhex(link[k])).decode()
    json_format.ParseDict(doc, req)  # unknown or misspelt fields fail here
    return req


def fail(msg):
    sys.exit("otlp: " + msg)


def check(req, tree, folded_dir, expect):
    d = req.dictionary
    st = d.string_table
    if not st or st[0] != "":
        fail("string_table[0] is not \"\"")
    for name in ("mapping_table", "location_table", "function_table", "link_table",
                 "attribute_table", "stack_table"):
        t = getattr(d, name)
        zero = type(t[0])() if len(t) else None
        if name == "link_table" and len(t):
            zero.trace_id, zero.span_id = bytes(16), bytes(8)
        if not len(t) or t[0] != zero:
            fail("%s[0] is not the zero value" % name)

    def s(i):
        if not 0 <= i < len(st):
            fail("string index %d out of range" % i)
        return st[i]

    def attrs(indices):
        out = {}
        for i in indices:
            if not 0 < i < len(d.attribute_table):
                fail("attribute index %d out of range" % i)
            a = d.attribute_table[i]
            k = s(a.key_strindex)
            if k in out:
                fail("attribute %r twice in one list" % k)
            out[k] = a.value.int_value if a.value.WhichOneof("value") == "int_value" else a.value.string_value
        return out

    def frames(stack_index):
        if not 0 < stack_index < len(d.stack_table):
            fail("stack index %d out of range" % stack_index)
        names = []
        for li in d.stack_table[stack_index].location_indices:
            if not 0 < li < len(d.location_table):
                fail("location index %d out of range" % li)
            loc = d.location_table[li]
            if not 0 <= loc.mapping_index < len(d.mapping_table):
                fail("mapping index out of range")
            for line in loc.lines:
                if not 0 < line.function_index < len(d.function_table):
                    fail("function index out of range")
                names.append(s(d.function_table[line.function_index].name_strindex))
        return names

    if len(req.resource_profiles) != 1:
        fail("%d ResourceProfiles" % len(req.resource_profiles))
    rp = req.resource_profiles[0]
    res = {kv.key: (kv.value.int_value if kv.value.WhichOneof("value") == "int_value" else kv.value.string_value)
           for kv in rp.resource.attributes}
    for e in expect:
        k, v = e.split("=", 1)
        if str(res.get(k)) != v:
            fail("resource %s=%r, expected %r" % (k, res.get(k), v))
    sp = rp.scope_profiles[0]
    if sp.scope.name != "perfport":
        fail("scope %r" % sp.scope.name)
    totals = tree["totals"]
    threads = {t["tid"]: t for t in tree["threads"]}
    seen = set()
    n_samples = n_threads = 0
    for prof in sp.profiles:
        pa = attrs(prof.attribute_indices)
        counter = pa.get("thread.state")
        if counter not in totals or counter in seen:
            fail("profile for counter %r" % counter)
        seen.add(counter)
        want_type = {"on-cpu": "cpu", "idle": "idle"}.get(counter, "off_cpu")
        if (s(prof.sample_type.type_strindex), s(prof.sample_type.unit_strindex)) != (want_type, "nanoseconds"):
            fail("%s: sample type %s/%s" % (counter, s(prof.sample_type.type_strindex),
                                            s(prof.sample_type.unit_strindex)))
        if len(prof.profile_id) != 16 or prof.profile_id == bytes(16):
            fail("profile_id %r" % prof.profile_id)
        t0, t1 = prof.time_unix_nano, prof.time_unix_nano + prof.duration_nano
        count = value = 0
        by_stack = collections.Counter()
        by_thread = collections.defaultdict(lambda: [0, 0])
        keys = set()
        shapes = set()
        for sm in prof.samples:
            a = attrs(sm.attribute_indices)
            if a.get("thread.state") != counter:
                fail("%s: a sample of state %r" % (counter, a.get("thread.state")))
            key = (sm.stack_index, tuple(sorted(sm.attribute_indices)), sm.link_index)
            if key in keys:
                fail("%s: two samples of one identity (stack, attributes, link)" % counter)
            keys.add(key)
            shape = "aggregated" if not sm.timestamps_unix_nano else "timed"
            shapes.add(shape)
            if shape == "aggregated" and len(sm.values) != 1:
                fail("%s: %d values without timestamps" % (counter, len(sm.values)))
            if shape == "timed" and len(sm.timestamps_unix_nano) != len(sm.values):
                fail("%s: %d values, %d timestamps" % (counter, len(sm.values), len(sm.timestamps_unix_nano)))
            ts = list(sm.timestamps_unix_nano)
            if ts and (ts != sorted(ts) or ts[0] < t0 or ts[-1] > t1):
                fail("%s: timestamps %d..%d outside the profile's [%d, %d] or unsorted" % (counter, ts[0], ts[-1], t0, t1))
            tid = a.get("thread.id")
            if tid not in threads:
                fail("%s: thread.id %r is no thread of the recording" % (counter, tid))
            t = threads[tid]
            # a thread the recording never named (tid -1) has an empty name
            if (a.get("process.pid"), a.get("thread.name")) != (t["pid"], t["comm"] or ""):
                fail("%s: thread %d attributes %r, the recording's pid %d comm %r" % (counter, tid, a, t["pid"], t["comm"]))
            count += len(sm.values)
            value += sum(sm.values)
            by_thread[tid][0] += len(sm.values)
            by_thread[tid][1] += sum(sm.values)
            by_stack[";".join(reversed(frames(sm.stack_index)))] += sum(sm.values)
            n_samples += len(sm.values)
        if len(shapes) != 1:
            fail("%s: samples of shapes %s: they SHOULD share one" % (counter, sorted(shapes)))
        if shapes == {"aggregated"}:  # a value per stack and thread: no counts to compare
            count = totals[counter]["count"]
            for tid in by_thread:
                by_thread[tid][0] = threads[tid]["counters"].get(counter, {"count": 0})["count"]
        if (count, value) != (totals[counter]["count"], totals[counter]["ns"]):
            fail("%s: %d samples %d ns, the tree's %d %d" % (counter, count, value,
                                                              totals[counter]["count"], totals[counter]["ns"]))
        for tid, (c, v) in by_thread.items():
            tc = threads[tid]["counters"].get(counter, {"count": 0, "ns": 0})
            if (c, v) != (tc["count"], tc["ns"]):
                fail("%s: thread %d has %d/%d, the tree's %d/%d" % (counter, tid, c, v, tc["count"], tc["ns"]))
        n_threads = max(n_threads, len(by_thread))
        folded = collections.Counter()
        with open(os.path.join(folded_dir, counter + ".folded")) as f:
            for line in f:
                stack, _, v = line.rstrip("\n").rpartition(" ")
                folded[stack] += int(v)
        if +folded != +by_stack:
            diff = set(folded.items()) ^ set(by_stack.items())
            fail("%s: stacks differ from the folded export, e.g. %s" % (counter, sorted(diff)[:3]))
    if seen != set(totals):
        fail("profiles for %s, the tree has %s" % (sorted(seen), sorted(totals)))
    print("otlp ok: %d profiles, %d samples, %d locations, %d stacks, up to %d threads" % (
        len(sp.profiles), n_samples, len(d.location_table) - 1, len(d.stack_table) - 1, n_threads))


def main():
    gen, path, encoding, tree_path, folded_dir = sys.argv[1:6]
    data = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()
    check(load(gen, data, encoding), json.load(open(tree_path)), folded_dir, sys.argv[6:])


if __name__ == "__main__":
    main()
