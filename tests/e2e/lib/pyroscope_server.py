#!/usr/bin/python3
"""A loopback Grafana Pyroscope for the upload tests: it reads requests the
way Pyroscope's handlers do and records what a series would hold.

  POST /ingest: the query as pkg/ingester/pyroscope/ingest_handler.go
      parses it (name{labels} with labelset's rules, from, until,
      sampleRate, spyName, units, aggregationType, format); format=pprof
      takes the body raw, a multipart/form-data body its "profile" field;
      the series' __name__ from the pprof's sample types as
      pkg/og/convert/pprof/profile.go's metricName decides it.
  POST /push.v1.PusherService/Push (Connect, application/proto): a
      push.v1.PushRequest read with protoc's Python code from
      tests/proto/pyroscope; __name__ from each series' labels.
Every pprof is decoded by `go tool pprof -raw`; its profile type ids
(NAME:TYPE:UNIT:PERIOD_TYPE:PERIOD_UNIT) are recorded with their totals,
their stacks (folded, root first) and their totals per tid label.

usage: pyroscope_server.py DIR SCRIPT GEN
  DIR     "port" when ready; per request N: req-N.json {api, path, step,
          headers, query, series: [{labels, types: {ID: {total, stacks,
          threads}}}]}
  SCRIPT  answers, comma-separated, the last repeating: ok, unavailable
          (503), invalid (400)
  GEN     where protoc's Python output goes
"""
import collections
import email.parser
import email.policy
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.parse

PROTO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../proto/pyroscope")


class Invalid(Exception):
    pass


def parse_labelset(name):
    """labelset.Parse: SERVICE{k=v,...}; service [A-Za-z0-9_./-]+, label
    names [A-Za-z0-9_.]+ and not __name__."""
    m = re.fullmatch(r"([^{]*)(?:\{(.*)\})?", name, re.S)
    if not m:
        raise Invalid("name %r" % name)
    service = m.group(1).strip()
    if not service or not re.fullmatch(r"[A-Za-z0-9_./-]+", service):
        raise Invalid("invalid service name %r" % service)
    labels = {"__name__": service}
    for kv in filter(None, (m.group(2) or "").split(",")):
        if "=" not in kv:
            raise Invalid("label %r" % kv)
        k, v = (x.strip() for x in kv.split("=", 1))
        if not re.fullmatch(r"[A-Za-z0-9_.]+", k) or k == "__name__":
            raise Invalid("invalid label name %r" % k)
        labels[k] = v
    return labels


def pprof_raw(data):
    """`go tool pprof -raw` of @data: (sample types, period type, samples
    [(values, location ids leaf first, labels)], locations {id: [function
    names innermost first]})."""
    with tempfile.NamedTemporaryFile(suffix=".pb.gz") as f:
        f.write(data)
        f.flush()
        out = subprocess.run(["go", "tool", "pprof", "-raw", f.name], capture_output=True,
                             text=True, check=True).stdout
    lines = out.split("\n")
    types, period, samples, locs = [], ("", ""), [], {}
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("PeriodType: "):
            period = tuple(line.split()[1:3])
        elif line == "Samples:":
            types = [t.replace("[dflt]", "").split("/") for t in lines[i + 1].split()]
            i += 2
            while i < len(lines) and lines[i].startswith(" "):
                vals, _, ids = lines[i].partition(":")
                labels = {}
                i += 1
                while i < len(lines) and lines[i].startswith("                ") and ":[" in lines[i]:
                    for k, v in re.findall(r"(\w+):\[([^\]]*)\]", lines[i]):
                        labels[k] = v
                    i += 1
                samples.append(([int(v) for v in vals.split()], [int(x) for x in ids.split()], labels))
            continue
        elif line == "Locations":
            i += 1
            cur = None
            while i < len(lines) and lines[i] and not lines[i].startswith("Mappings"):
                m = re.match(r"\s+(\d+): 0x[0-9a-f]+ (?:M=\d+ )?(.*?) \S*:\d+ s=\d+$", lines[i])
                if m:
                    cur = int(m.group(1))
                    locs[cur] = [m.group(2)]
                else:
                    m = re.match(r"\s+(.*?) \S*:\d+ s=\d+$", lines[i])
                    if m and cur is not None:
                        locs[cur].append(m.group(1))
                i += 1
            continue
        i += 1
    return types, period, samples, locs


def metric_name(types):
    """pkg/og/convert/pprof: "wall" if a type is, else the first type with
    cpu in it makes process_cpu (then memory, mutex, block, goroutines)."""
    names = [t for t, _ in types]
    if "wall" in names:
        return "wall"
    for st in names:
        if "cpu" in st:
            return "process_cpu"
        if "alloc_" in st or "inuse_" in st or st in ("space", "objects"):
            return "memory"
        if "mutex_" in st:
            return "mutex"
        if "block_" in st:
            return "block"
        if "goroutines" in st:
            return "goroutines"
    return names[-1] if names else ""


def series_types(name, data):
    """(__name__, {profile type id: {total, stacks, threads}}) of one
    pprof; @name None: as /ingest names it (metric_name)."""
    types, period, samples, locs = pprof_raw(data)
    name = metric_name(types) if name is None else name
    out = {}
    for k, (t, unit) in enumerate(types):
        tid = "%s:%s:%s:%s:%s" % (name, t, unit, period[0], period[1])
        stacks, threads = collections.Counter(), collections.Counter()
        total = 0
        for vals, ids, labels in samples:
            if not vals[k]:
                continue
            total += vals[k]
            frames = [f for loc in ids for f in locs.get(loc, ["?"])]
            stacks[";".join(reversed(frames))] += vals[k]
            threads[labels.get("tid", "")] += vals[k]
        out[tid] = {"total": total, "stacks": dict(stacks), "threads": dict(threads)}
    return name, out


def handle_ingest(query, ctype, body):
    q = urllib.parse.parse_qs(query, keep_blank_values=True)
    get = lambda k: q.get(k, [""])[0]
    labels = parse_labelset(get("name"))
    rec = {k: get(k) for k in ("from", "until", "sampleRate", "spyName", "units",
                               "aggregationType", "format")}
    for k in ("from", "until"):
        if not re.fullmatch(r"\d+", rec[k]):
            raise Invalid("%s %r is not unix seconds" % (k, rec[k]))
    if rec["sampleRate"] and not re.fullmatch(r"\d+", rec["sampleRate"]):
        raise Invalid("sampleRate %r" % rec["sampleRate"])
    if rec["format"] != "pprof" and "multipart/form-data" not in ctype:
        raise Invalid("format %r: not pprof" % rec["format"])
    if "multipart/form-data" in ctype:
        msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body)
        parts = {p.get_param("name", header="content-disposition"): p.get_payload(decode=True)
                 for p in msg.iter_parts()}
        body = parts.get("profile")
        if body is None:
            raise Invalid("no profile field")
    service = labels.pop("__name__")
    name, types = series_types(None, body)
    labels.update({"__name__": name, "service_name": service, "__delta__": "false",
                   "pyroscope_spy": rec["spyName"] or "unknown"})
    return rec, [{"labels": labels, "types": types}]


def handle_push(gen, body):
    if not os.path.exists(os.path.join(gen, "push")):
        os.makedirs(gen, exist_ok=True)
        subprocess.run(["protoc", "--python_out=" + gen, "-I", PROTO, "push/v1/push.proto",
                        "types/v1/types.proto"], check=True)
        # Python's own "types" module hides a package of that name: rename it
        os.rename(os.path.join(gen, "types"), os.path.join(gen, "pyroscope_types"))
        path = os.path.join(gen, "push", "v1", "push_pb2.py")
        with open(path) as f:
            code = f.read().replace("from types.v1 import", "from pyroscope_types.v1 import")
        with open(path, "w") as f:
            f.write(code)
    sys.path.insert(0, gen)
    from push.v1 import push_pb2
    req = push_pb2.PushRequest()
    req.ParseFromString(body)
    series = []
    for s in req.series:
        labels = {lp.name: lp.value for lp in s.labels}
        if not labels.get("__name__") or not labels.get("service_name"):
            raise Invalid("a series without __name__ or service_name: %r" % labels)
        types = {}
        for raw in s.samples:
            if not raw.ID:
                raise Invalid("a sample without an ID")
            types.update(series_types(labels["__name__"], raw.raw_profile)[1])
        series.append({"labels": labels, "types": types, "ids": [r.ID for r in s.samples]})
    return series


def main():
    import loopback

    directory, script, gen = sys.argv[1], loopback.Script(sys.argv[2]), sys.argv[3]

    class Handler(loopback.Handler):
        def do_POST(self):
            n, step = script.next()
            body = self.body()
            path, _, query = self.path.partition("?")
            ctype = self.headers.get("Content-Type", "")
            rec = {"path": path, "step": step, "content_type": ctype,
                   "headers": {k.lower(): v for k, v in self.headers.items()}}
            code, answer = 200, None
            try:
                if path == "/ingest":
                    rec["api"] = "ingest"
                    rec["query"], rec["series"] = handle_ingest(query, ctype, body)
                elif path == "/push.v1.PusherService/Push":
                    rec["api"] = "push"
                    if ctype != "application/proto":
                        raise Invalid("content type %r" % ctype)
                    rec["series"] = handle_push(gen, body)
                else:
                    code, answer = 404, {"code": "not_found", "message": "no such path"}
            except (Invalid, subprocess.CalledProcessError, ValueError) as e:
                code, answer = 400, {"code": "invalid_argument", "message": "from the server: %s" % e}
                rec["step"] = "refused: %s" % e
            if code == 200 and step == "unavailable":
                code, answer = 503, {"code": "unavailable", "message": "unavailable, from the test"}
            elif code == 200 and step == "invalid":
                code, answer = 400, {"code": "invalid_argument", "message": "invalid, from the test"}
            base = os.path.join(directory, "req-%d" % n)
            with open(base + ".json.tmp", "w") as f:
                json.dump(rec, f)
            os.rename(base + ".json.tmp", base + ".json")
            if code == 200 and rec.get("api") == "push":
                self.send_response(200)
                self.send_header("Content-Type", "application/proto")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.answer(code, answer)

    loopback.serve(Handler, directory)


if __name__ == "__main__":
    main()
