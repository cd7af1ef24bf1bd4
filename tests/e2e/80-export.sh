#!/usr/bin/env bash
# perfport export and formats: the folded exporter against the tree's own
# totals (perfport report --json) and the folded line grammar; the pprof
# exporter decoded by protoc and checked against the tree and perf's build
# ids; an
# out-of-tree plugin built here against include/ only; several formats into
# a directory; plugins that must be refused (wrong ABI, missing symbol, too
# small a struct) and options that must be (unknown key, bad value).
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
PROTO=/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto
command -v protoc >/dev/null || skip "protoc is not installed (apt-get install protobuf-compiler)"
[ -f "$PROTO" ] || skip "pprof's profile.proto is not installed (apt-get install golang-github-google-pprof-dev)"
build_shape
record "$WORK/pt.data" -e cpu-clock -e sched:sched_switch --switch-events -g -- "$SHAPE" 1 "$WORK"

"$PERFPORT" formats | has '^folded ' || fail "formats does not list folded"
"$PERFPORT" formats folded | has '^  counter ' || fail "formats folded lists no options"

"$PERFPORT" -q report --json -i "$WORK/pt.data" >"$WORK/tree.json" || fail "report exit $?"
for v in ns samples; do
	"$PERFPORT" -q export -i "$WORK/pt.data" -f folded -o "$WORK/all-$v.folded" \
		-O counter=all -O value=$v || fail "export counter=all value=$v: exit $?"
done
"$PERFPORT" -q export -i "$WORK/pt.data" -f folded -o - -O folded.counter=lock,io \
	>"$WORK/lockio.folded" || fail "export to stdout: exit $?"
"$PERFPORT" -q export -i "$WORK/pt.data" -f folded -o "$WORK/oncpu.folded" -O counter=on-cpu \
	-O value=samples || fail "export counter=on-cpu value=samples: exit $?"
perf script -i "$WORK/pt.data" -F event,ip,sym >"$WORK/script.txt" 2>"$WORK/stderr.txt" ||
	fail "perf script failed: $(said "$WORK/stderr.txt")"
"$PERFPORT" -q export -i "$WORK/pt.data" -f folded -o "$WORK/mod.folded" -O module=true \
	-O annotate=false || fail "export module=true: exit $?"

$PY - "$WORK" <<'PY' || fail "folded output"
import json, re, sys
w = sys.argv[1]
tree = json.load(open(w + "/tree.json"))
totals = tree["totals"]
def tot(names, key):
    return sum(totals.get(n, {}).get(key, 0) for n in names)
line = re.compile(r"^([^;\n]+)(;[^;\n]+)* ([0-9]+)$")
def read(path):
    rows = []
    for n, l in enumerate(open(path), 1):
        l = l.rstrip("\n")
        m = line.match(l)
        if not m or any(not f.strip() for f in l.rsplit(" ", 1)[0].split(";")):
            sys.exit("%s:%d: not a folded line: %r" % (path, n, l))
        rows.append((l.rsplit(" ", 1)[0], int(l.rsplit(" ", 1)[1])))
    return rows
present = list(totals)
checks = [("all-ns.folded", present, "ns"), ("all-samples.folded", present, "count"),
          ("lockio.folded", ["lock", "io"], "ns")]
for name, counters, key in checks:
    rows = read(w + "/" + name)
    got, want = sum(v for _, v in rows), tot(counters, key)
    print("%-18s %6d lines, total %d = tree %d" % (name, len(rows), got, want))
    if got != want:
        sys.exit("%s: total %d, the tree's %d" % (name, got, want))
    if len(set(s for s, _ in rows)) != len(rows):
        sys.exit("%s: a stack appears twice" % name)
# the on-CPU samples whose leaf is heavy() or light(), as perf script counts
# them in the same file (exact: no statistics, whatever the machine's load)
rows = read(w + "/oncpu.folded")
leaf = lambda name: sum(v for s, v in rows if s.split(";")[-1].startswith(name))
got = (leaf("heavy"), leaf("light"))
want = [0, 0]
top = False
for l in open(w + "/script.txt"):
    if l.strip().endswith(":") and not l.startswith("\t"):
        top = l.strip() == "cpu-clock:"
    elif top and l.strip():
        sym = l.split()[1] if len(l.split()) > 1 else ""
        if sym in ("heavy", "light"):
            want[sym == "light"] += 1
        top = False
print("on-CPU samples in heavy, light: %d, %d; perf script: %d, %d" % (got + tuple(want)))
if list(got) != want or not got[1]:
    sys.exit("heavy/light samples %s, perf script counts %s" % (got, want))
rows = read(w + "/all-ns.folded")
if not any("_[k]" in s for s, _ in rows):
    sys.exit("no kernel frame marked _[k]")
mod = read(w + "/mod.folded")
if not any(re.search(r"heavy \[shape\]", s) for s, _ in mod) or any("_[k]" in s for s, _ in mod):
    sys.exit("module=true annotate=false: no 'heavy [shape]' frame, or a _[k] suffix")
print("ok")
PY

# folded's default counter: on-cpu when the profile has it (the same lines
# as counter=on-cpu); a recording of sched_switch alone (perf sched record
# writes such) has none, so its lines hold every off-CPU state's time
# (the tree's totals but idle) instead of an empty file; a counter asked
# for that holds nothing is warned about.
"$PERFPORT" -q export -i "$WORK/pt.data" -f folded -o "$WORK/default.folded" ||
	fail "export folded (default counter): exit $?"
"$PERFPORT" -q export -i "$WORK/pt.data" -f folded -O counter=on-cpu -o "$WORK/oncpu-ns.folded" ||
	fail "export folded counter=on-cpu: exit $?"
cmp -s "$WORK/default.folded" "$WORK/oncpu-ns.folded" ||
	fail "folded's default differs from counter=on-cpu on a recording with on-CPU samples"
record "$WORK/sched.data" -e sched:sched_switch -g -- "$SHAPE" 1 "$WORK"
"$PERFPORT" -q report --json -i "$WORK/sched.data" >"$WORK/sched.json" || fail "report sched.data: exit $?"
"$PERFPORT" -q export -i "$WORK/sched.data" -f folded -o "$WORK/sched.folded" ||
	fail "export folded of a sched_switch recording: exit $?"
"$PERFPORT" export -i "$WORK/sched.data" -f folded -O counter=on-cpu -o "$WORK/sched-cpu.folded" \
	2>"$WORK/sched-cpu.err" || fail "export folded counter=on-cpu of sched.data: exit $?: $(said "$WORK/sched-cpu.err")"
[ -s "$WORK/sched-cpu.folded" ] && fail "counter=on-cpu of a sched_switch recording wrote lines"
has "counters asked for hold nothing" <"$WORK/sched-cpu.err" ||
	fail "no warning for an empty counter=on-cpu: $(cat "$WORK/sched-cpu.err")"
$PY - "$WORK" <<'PY' || fail "folded default of a sched_switch recording"
import json, sys
w = sys.argv[1]
totals = json.load(open(w + "/sched.json"))["totals"]
want = sum(v["ns"] for k, v in totals.items() if k not in ("on-cpu", "idle"))
rows = [l.rsplit(" ", 1) for l in open(w + "/sched.folded")]
got = sum(int(v) for _, v in rows)
print("sched_switch only: %d lines, %d ns; the tree's off-CPU states %s: %d ns"
      % (len(rows), got, sorted(k for k in totals if k != "idle"), want))
if "on-cpu" in totals or not want or got != want:
    sys.exit("folded default: %d ns, want the off-CPU total %d" % (got, want))
if not any(";" in s for s, _ in rows):
    sys.exit("no off-CPU line has a caller (recorded with -g)")
PY

# pprof, in one pass with folded: decoded by protoc, totals per sample type,
# functions, lines, build ids against perf buildid-list.
"$PERFPORT" -q export -i "$WORK/pt.data" -f pprof,folded -o "$WORK/pp" || fail "export -f pprof,folded: exit $?"
[ -s "$WORK/pp/profile.folded" ] || fail "no pp/profile.folded"
gzip -t "$WORK/pp/profile.pb.gz" || fail "profile.pb.gz is not gzip"
zcat "$WORK/pp/profile.pb.gz" | protoc --decode=perftools.profiles.Profile \
	--proto_path="$(dirname "$PROTO")" profile.proto >"$WORK/pp/decoded.txt" ||
	fail "protoc cannot decode the pprof profile"
perf buildid-list -i "$WORK/pt.data" >"$WORK/pp/ids.txt" 2>/dev/null
$PY "$TOP/tests/e2e/lib/pprof_check.py" "$WORK/pp/decoded.txt" "$WORK/tree.json" "$WORK/pp/ids.txt" ||
	fail "pprof output"
"$PERFPORT" -q export -i "$WORK/pt.data" -f pprof -O counter=lock -O gzip=false -o "$WORK/lock.pb" ||
	fail "export pprof counter=lock gzip=false: exit $?"
protoc --decode=perftools.profiles.Profile --proto_path="$(dirname "$PROTO")" profile.proto \
	<"$WORK/lock.pb" | grep -c '^sample_type {' | has -x 3 ||
	fail "pprof counter=lock: want 3 sample types (samples, lock, lock_intervals)"

# pprof as go tool pprof reads it (Debian's golang-go): loads without a
# word on stderr; per sample type the totals of perfport report --json
# (off-CPU intervals counted too); each sample labelled with its pid, tid and
# thread (the format groups by thread); the main binary is mapping 1; every
# location of it, taken from its address through the mapping to the file
# offset and the ELF's program headers to a symbol address, lies in the
# function pprof names for it (by nm; a PLT stub by objdump's name@plt, which
# nm does not list), as -disasm and symbolizers read it.
if command -v go >/dev/null && go tool pprof -h >/dev/null 2>&1; then
	"$PERFPORT" -q export -i "$WORK/pt.data" -f pprof -o "$WORK/go.pb.gz" || fail "export pprof: exit $?"
	go tool pprof -raw "$WORK/go.pb.gz" >"$WORK/go.raw" 2>"$WORK/go.err" || fail "go tool pprof -raw: $(cat "$WORK/go.err")"
	[ ! -s "$WORK/go.err" ] || fail "go tool pprof warns: $(head -3 "$WORK/go.err")"
	readelf -lW "$SHAPE" >"$WORK/shape.phdr" && nm -n --defined-only "$SHAPE" >"$WORK/shape.nm" &&
		objdump -d -j .plt -j .plt.sec -j .plt.got "$SHAPE" >"$WORK/shape.plt" 2>"$WORK/stderr.txt" ||
		fail "readelf/nm/objdump on $SHAPE: $(said "$WORK/stderr.txt")"
	$PY - "$WORK" "$SHAPE" <<'PY' || fail "go tool pprof's reading"
import json, re, sys
w, shape = sys.argv[1], sys.argv[2]
raw = open(w + "/go.raw").read().splitlines()
tot = json.load(open(w + "/tree.json"))["totals"]
i = raw.index("Samples:")
types = [t.replace("[dflt]", "").split("/")[0] for t in raw[i + 1].split()]
sums, labelled, samples = [0] * len(types), 0, 0
j = i + 2
while j < len(raw) and raw[j].startswith(" ") and ":" in raw[j]:
    vals = raw[j].split(":")[0].split()
    if len(vals) != len(types):
        sys.exit("a sample line with %d values for %d types: %r" % (len(vals), len(types), raw[j]))
    samples += 1
    sums = [a + int(b) for a, b in zip(sums, vals)]
    j += 1
    tags = ""
    while j < len(raw) and raw[j].startswith("                "):
        tags += raw[j]
        j += 1
    labelled += bool(re.search(r"pid:\[\d+\]", tags) and re.search(r"tid:\[\d+\]", tags) and "thread:[" in tags)
want = {"samples": tot["on-cpu"]["count"]}
for c, v in tot.items():
    want[c.replace("-", "_")] = v["ns"]
    if c not in ("on-cpu", "idle"):
        want[c.replace("-", "_") + "_intervals"] = v["count"]
for t, got in zip(types, sums):
    if got != want.get(t):
        sys.exit("go tool pprof: %s totals %d, perfport report %s" % (t, got, want.get(t)))
if set(want) - set(types):
    sys.exit("no sample type for %s" % sorted(set(want) - set(types)))
if labelled != samples:
    sys.exit("%d of %d samples carry pid, tid and thread labels" % (labelled, samples))
# mappings and locations
m = raw.index("Mappings")
maps = {}
for line in raw[m + 1:]:
    mm = re.match(r"(\d+): 0x([0-9a-f]+)/0x([0-9a-f]+)/0x([0-9a-f]+) (\S+)", line)
    if mm:
        maps[int(mm.group(1))] = (int(mm.group(2), 16), int(mm.group(3), 16), int(mm.group(4), 16), mm.group(5))
if maps[1][3] != shape:
    sys.exit("mapping 1 is %s, not the main binary %s" % (maps[1][3], shape))
loads = []
for line in open(w + "/shape.phdr"):
    f = line.split()
    if f and f[0] == "LOAD":
        loads.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))   # offset, vaddr, filesz
syms = []
for line in open(w + "/shape.nm"):
    f = line.split()
    if len(f) == 3 and f[1] in "tTwW":
        syms.append((int(f[0], 16), f[2]))
for line in open(w + "/shape.plt"):
    mm = re.match(r"([0-9a-f]+) <([^<>+-]+@plt)>:", line)
    if mm:
        syms.append((int(mm.group(1), 16), mm.group(2)))
syms.sort()
def symbol_at(v):
    best = None
    for a, n in syms:
        if a <= v:
            best = n
    return best
checked = 0
loc = raw.index("Locations")
k = loc + 1
while k < len(raw) and not raw[k].startswith("Mappings"):
    mm = re.match(r"\s+\d+: 0x([0-9a-f]+) M=1 (\S+)", raw[k])
    k += 1
    if not mm:
        continue
    names = [mm.group(2)]
    while k < len(raw) and raw[k].startswith("             "):
        names.append(raw[k].split()[0])   # inlined: the last is the function
        k += 1
    addr = int(mm.group(1), 16)
    start, limit, off, _ = maps[1]
    fo = addr - start + off
    seg = [s for s in loads if s[0] <= fo < s[0] + s[2]]
    if not seg:
        sys.exit("location %#x: file offset %#x in no LOAD segment" % (addr, fo))
    vaddr = fo - seg[0][0] + seg[0][1]
    if symbol_at(vaddr) != names[-1]:
        sys.exit("location %#x -> %#x is in %s by nm, pprof names it %s" % (addr, vaddr, symbol_at(vaddr), names[-1]))
    checked += 1
# the cpu thread's heavy() and light() are always sampled; other functions of
# the workload (cpu, io, locker, _start) only sometimes: 2 failed twice in ~20
# runs with 3 asked for, its cause not found (see issue 20's stop-29 note)
if checked < 2:
    sys.exit("only %d locations of the main binary" % checked)
print("go tool pprof: %d samples, totals = the tree's, all labelled; %d main-binary locations at their functions' addresses" % (samples, checked))
PY
else
	echo "(go is not installed: go tool pprof not tried)"
fi

# An out-of-tree plugin, built against include/ only, and two formats at once.
mkdir -p "$WORK/plugins"
cat >"$WORK/count.c" <<'C'
#include <stdlib.h>
#include <string.h>
#include <perfport/plugin.h>
static const struct perfport_option_def opts[] = {
	{ "counter", PERFPORT_OPT_ENUM, "on-cpu", "on-cpu,lock,io,sleep", "counter to sum" },
};
struct st { const struct perfport_host *h; const char *counter; };
static enum perfport_status init(const struct perfport_host *h, const struct perfport_option *o,
				 size_t n, void **state)
{
	struct st *s = calloc(1, sizeof(*s));
	if (!s || n != 1 || strcmp(o[0].name, "counter"))
		return PERFPORT_ERROR;
	s->h = h;
	s->counter = o[0].value;
	*state = s;
	return PERFPORT_OK;
}
static int leave_count(void *ctx, const struct perfport_profile *p, uint32_t node, int leave)
{
	(void)p; (void)node;
	if (leave)
		++*(size_t *)ctx;
	return 0;
}
static enum perfport_status write_(void *state, const struct perfport_profile *p, FILE *out)
{
	struct st *s = state;
	size_t left = 0;
	for (unsigned c = 0; c < p->nr_counters; c++)
		if (!strcmp(p->counter_names[c], s->counter))
			fprintf(out, "%s %llu\n", s->counter,
				(unsigned long long)perfport_total_value(p, 0, c));
	s->h->walk(p, leave_count, &left);
	fprintf(out, "nodes %zu left %zu frames %zu id %s\n", p->nr_nodes, left, p->nr_frames,
		p->profile_id);
	for (size_t i = 0; i < p->nr_labels; i++)
		fprintf(out, "label %s=%s\n", p->labels[i].key, p->labels[i].value);
	if (PERFPORT_HAS(s->h, struct perfport_host, gzip)) {
		void *gz;
		size_t n;
		if (s->h->gzip("perfport", 8, &gz, &n) == PERFPORT_OK) {
			const unsigned char *b = gz;
			fprintf(out, "gzip %02x%02x %zu\n", b[0], b[1], n);
			s->h->free(gz);
		}
	}
	return PERFPORT_OK;
}
static void fini(void *state) { free(state); }
#ifdef RETRIES
/* asks to be retried RETRIES times, then succeeds; each call a line in $COUNT_CALLS */
static enum perfport_status upload_fn(void *state, const struct perfport_profile *p)
{
	FILE *f = fopen(getenv("COUNT_CALLS"), "a+");
	int n = 0, c;

	(void)state; (void)p;
	if (!f)
		return PERFPORT_ERROR;
	rewind(f);
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fputs("upload\n", f);
	fclose(f);
	return n < RETRIES ? PERFPORT_RETRY : PERFPORT_OK;
}
#else
#define upload_fn NULL
#endif
__attribute__((visibility("default"))) const struct perfport_exporter perfport_exporter = {
	.abi_version = ABI, .struct_size = SIZE, .name = "count",
	.description = "a test exporter", .default_output = "count.txt",
	.options = opts, .nr_options = 1, .init = init, .write = write_, .upload = upload_fn,
	.fini = fini,
};
C
build_plugin() { # NAME CFLAGS...
	local name=$1; shift
	cc -std=gnu11 -Wall -Werror -I"$TOP/include" -fPIC -shared -fvisibility=hidden "$@" \
		-o "$WORK/plugins/$name.so" "$WORK/count.c" || fail "building test plugin $name"
}
build_plugin count -DABI=PERFPORT_ABI_VERSION '-DSIZE=sizeof(struct perfport_exporter)'
"$PERFPORT" -q export --plugin-dir "$WORK/plugins" -i "$WORK/pt.data" -f folded,count \
	-o "$WORK/out" -O count.counter=lock --label service=shape --label env=test ||
	fail "export -f folded,count: exit $?"
[ -s "$WORK/out/profile.folded" ] || fail "no out/profile.folded"
want=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["totals"]["lock"]["ns"])' \
	"$WORK/tree.json")
grep -qx "lock $want" "$WORK/out/count.txt" || fail "count plugin: $(head -1 "$WORK/out/count.txt"), want lock $want"
grep -Eq '^nodes ([0-9]+) left \1 frames [0-9]+ id [0-9a-f-]{36}$' "$WORK/out/count.txt" ||
	fail "walk did not leave every node once: $(sed -n 2p "$WORK/out/count.txt")"
grep -qx 'label service=shape' "$WORK/out/count.txt" || fail "labels not passed"
grep -Eq '^gzip 1f8b [0-9]+$' "$WORK/out/count.txt" || fail "host gzip service: $(grep gzip "$WORK/out/count.txt")"
PERFPORT_PLUGIN_PATH="$WORK/plugins" "$PERFPORT" formats | has '^count ' ||
	fail "formats does not list a plugin on PERFPORT_PLUGIN_PATH"
# A plugin built for ABI 1.0 (its descriptor ends at fini; no flags) still loads and runs.
mkdir -p "$WORK/old"
cc -std=gnu11 -Wall -Werror -I"$TOP/include" -fPIC -shared -fvisibility=hidden \
	'-DABI=(1u << 16)' '-DSIZE=(offsetof(struct perfport_exporter, fini) + sizeof(void *))' \
	-o "$WORK/old/count.so" "$WORK/count.c" || fail "building the ABI 1.0 plugin"
"$PERFPORT" -q export --plugin-dir "$WORK/old" -i "$WORK/pt.data" -f count -O counter=lock \
	-o "$WORK/old.txt" || fail "an ABI 1.0 plugin: exit $?"
grep -qx "lock $want" "$WORK/old.txt" || fail "an ABI 1.0 plugin: $(head -1 "$WORK/old.txt")"
PERFPORT_PLUGIN_PATH="$WORK/old" "$PERFPORT" formats count | has "(ABI 1.0)" ||
	fail "formats does not show the plugin's ABI 1.0"

# An upload() that returns PERFPORT_RETRY is called again, as often as the
# transport tries a request (--retries), then fails.
mkdir -p "$WORK/retry"
cc -std=gnu11 -Wall -Werror -I"$TOP/include" -fPIC -shared -fvisibility=hidden \
	-DABI=PERFPORT_ABI_VERSION '-DSIZE=sizeof(struct perfport_exporter)' -DRETRIES=2 \
	-o "$WORK/retry/count.so" "$WORK/count.c" || fail "building the retrying plugin"
export COUNT_CALLS="$WORK/calls"
rm -f "$COUNT_CALLS"
rc=0; "$PERFPORT" upload --plugin-dir "$WORK/retry" -i "$WORK/pt.data" -f count --retries 3 \
	2>"$WORK/err" || rc=$?
[ $rc -eq 0 ] && [ "$(wc -l <"$COUNT_CALLS")" -eq 3 ] ||
	fail "RETRY twice then OK, 3 attempts: exit $rc, $(wc -l <"$COUNT_CALLS") calls: $(cat "$WORK/err")"
grep -q "upload failed for now; attempt 3 of 3" "$WORK/err" || fail "the retry is not logged: $(cat "$WORK/err")"
rm -f "$COUNT_CALLS"
rc=0; "$PERFPORT" -q upload --plugin-dir "$WORK/retry" -i "$WORK/pt.data" -f count --retries 2 \
	2>"$WORK/err" || rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$COUNT_CALLS")" -eq 2 ] ||
	fail "RETRY past --retries 2: exit $rc, $(wc -l <"$COUNT_CALLS") calls"
grep -q "still asking to be retried" "$WORK/err" || fail "the last RETRY is not said: $(cat "$WORK/err")"
unset COUNT_CALLS
echo "ok: an upload asking to be retried is called again, up to --retries"

# Refusals: each with its reason, exit 1, nothing written.
expect_refusal() { # WHAT PATTERN ARGS...
	local what=$1 pat=$2 rc=0; shift 2
	"$PERFPORT" export --plugin-dir "$WORK/plugins" -i "$WORK/pt.data" -o "$WORK/refused.out" "$@" \
		>/dev/null 2>"$WORK/err" || rc=$?
	[ $rc -eq 1 ] || fail "$what: exit $rc, want 1"
	grep -q -- "$pat" "$WORK/err" || fail "$what: message '$(cat "$WORK/err")' lacks '$pat'"
	[ ! -e "$WORK/refused.out" ] || fail "$what: output written"
	echo "ok: $what refused: $(head -1 "$WORK/err")"
}
rm -f "$WORK/plugins/count.so"
build_plugin count '-DABI=(2u << 16)' '-DSIZE=sizeof(struct perfport_exporter)'
expect_refusal "a plugin for ABI 2" "built for plugin ABI 2.0" -f count
build_plugin count -DABI=PERFPORT_ABI_VERSION -DSIZE=16
expect_refusal "a too small struct" "struct perfport_exporter is 16 bytes" -f count
build_plugin count -DABI=PERFPORT_ABI_VERSION '-DSIZE=sizeof(struct perfport_exporter)' \
	-Dperfport_exporter=other_name
expect_refusal "a plugin without the symbol" "does not export 'perfport_exporter'" -f count
expect_refusal "an unknown option" "has no option 'bogus'" -f folded -O folded.bogus=1
expect_refusal "a bad option value" "option 'value' takes ns,ms,samples, not 'hours'" \
	-f folded -O value=hours
expect_refusal "an option for a format not asked for" "'pprof' is not one of the formats" \
	-f folded -O pprof.x=1

# unsafe plugins are refused before any of their code runs (a constructor
# that would leave a mark): a file others may write, a symbolic link, a
# directory others may write - as ld.so's secure mode refuses a library
cat >"$WORK/ctor.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void mark(void)
{
	FILE *f = fopen(getenv("CTOR_MARK"), "w");
	if (f)
		fclose(f);
}
C
build_plugin count -DABI=PERFPORT_ABI_VERSION '-DSIZE=sizeof(struct perfport_exporter)'
cc -std=gnu11 -fPIC -shared -o "$WORK/ctor.o.so" "$WORK/ctor.c" || fail "building the constructor"
mkdir -p "$WORK/unsafe"
for kind in file-writable link dir-writable; do
	rm -rf "$WORK/unsafe" && mkdir -p "$WORK/unsafe" && chmod 755 "$WORK/unsafe"
	cc -std=gnu11 -Wall -Werror -I"$TOP/include" -fPIC -shared -fvisibility=hidden \
		-DABI=PERFPORT_ABI_VERSION '-DSIZE=sizeof(struct perfport_exporter)' \
		-o "$WORK/unsafe/real.so" "$WORK/count.c" "$WORK/ctor.c" || fail "building the marked plugin"
	case $kind in
	file-writable) mv "$WORK/unsafe/real.so" "$WORK/unsafe/count.so"; chmod 666 "$WORK/unsafe/count.so" ;;
	link) ln -s real.so "$WORK/unsafe/count.so" ;;
	dir-writable) mv "$WORK/unsafe/real.so" "$WORK/unsafe/count.so"; chmod 777 "$WORK/unsafe" ;;
	esac
	rm -f "$WORK/mark"
	rc=0; CTOR_MARK="$WORK/mark" "$PERFPORT" export --plugin-dir "$WORK/unsafe" -i "$WORK/pt.data" \
		-f count -o "$WORK/unsafe.out" >/dev/null 2>"$WORK/err" || rc=$?
	[ $rc -ne 0 ] && grep -q "plugin '$WORK/unsafe/count.so' refused" "$WORK/err" ||
		fail "an unsafe plugin ($kind) was loaded: exit $rc, $(cat "$WORK/err")"
	[ ! -e "$WORK/mark" ] || fail "an unsafe plugin's ($kind) constructor ran"
	echo "ok: unsafe plugin ($kind) refused before its code ran: $(grep -o "refused: .*" "$WORK/err")"
done
chmod 755 "$WORK/unsafe"

# PERFPORT_PLUGIN_PATH with many entries: the rest ignored with a warning,
# the built-in plugins still found
many=$(for i in $(seq 20); do printf '%s/none%d:' "$WORK" "$i"; done)
rc=0; PERFPORT_PLUGIN_PATH="$many" "$PERFPORT" export -i "$WORK/pt.data" -f folded -o "$WORK/many.folded" \
	2>"$WORK/err" || rc=$?
[ $rc -eq 0 ] && [ -s "$WORK/many.folded" ] || fail "PERFPORT_PLUGIN_PATH with 20 entries: exit $rc, $(cat "$WORK/err")"
grep -q "PERFPORT_PLUGIN_PATH: .* ignored" "$WORK/err" || fail "no warning for the ignored directories"
echo "ok: PERFPORT_PLUGIN_PATH with 20 entries"

# a long PERFPORT_PLUGIN_PATH is read whole, never cut: cut at 4095 bytes,
# its last entry $WORK/trusted_plugins named $WORK/tr, a directory holding
# another plugin; an entry longer than a path can be is ignored, warned
mkdir -p "$WORK/tr" "$WORK/trusted_plugins"
cp "$WORK/plugins/count.so" "$WORK/tr/"
pad=$((4095 - ${#WORK} - 3 - 2))
long=$(printf '/%*s' $((pad / 2 - 1)) '' | tr ' ' a):$(printf '/%*s' $((pad - pad / 2 - 1)) '' | tr ' ' b):$WORK/trusted_plugins
[ "${long:0:4095}" = "${long%%:$WORK/trusted_plugins}:$WORK/tr" ] || fail "the test's path list is not cut where it should be"
PERFPORT_PLUGIN_PATH="$long" "$PERFPORT" formats >"$WORK/formats.txt" 2>&1 || fail "formats: exit $?"
! has '^count ' "$WORK/formats.txt" || fail "a cut PERFPORT_PLUGIN_PATH loaded plugins from the cut name's directory"
huge=$(printf '/%*s' 5000 '' | tr ' ' c)
PERFPORT_PLUGIN_PATH="$huge:$WORK/plugins" "$PERFPORT" formats >"$WORK/formats.txt" 2>&1 || fail "formats: exit $?"
has "PERFPORT_PLUGIN_PATH: a directory of 5001 bytes.*ignored" "$WORK/formats.txt" ||
	fail "no warning for an over-long PERFPORT_PLUGIN_PATH entry: $(head -3 "$WORK/formats.txt")"
has '^count ' "$WORK/formats.txt" || fail "the entry after an over-long one was not read"
echo "ok: a long PERFPORT_PLUGIN_PATH read whole; an over-long entry refused"
expect_refusal "an unknown format" "no format 'nosuch'" -f nosuch

# the recording is never overwritten: -o naming it (directly or by a link)
# is refused before reading; a file of a multi-format directory likewise
cp "$WORK/pt.data" "$WORK/in.data"
ln -sf "$WORK/in.data" "$WORK/in.link"
sum=$(md5sum <"$WORK/in.data")
for o in "$WORK/in.data" "$WORK/in.link"; do
	rc=0; "$PERFPORT" -q export -i "$WORK/in.data" -f folded -o "$o" 2>"$WORK/err" || rc=$?
	[ $rc -eq 1 ] && grep -q "is the recording being read" "$WORK/err" || fail "-o $o: exit $rc: $(cat "$WORK/err")"
done
mkdir -p "$WORK/od" && cp "$WORK/pt.data" "$WORK/od/profile.folded"
rc=0; "$PERFPORT" -q export -i "$WORK/od/profile.folded" -f folded,pprof -o "$WORK/od" 2>"$WORK/err" || rc=$?
[ $rc -eq 2 ] && grep -q "profile.folded' is the recording being read: not overwritten" "$WORK/err" ||
	fail "a directory file that is the input: exit $rc: $(cat "$WORK/err")"
[ "$(md5sum <"$WORK/in.data")" = "$sum" ] && [ "$(md5sum <"$WORK/od/profile.folded")" = "$sum" ] ||
	fail "the recording was overwritten"
[ -s "$WORK/od/profile.pb.gz" ] || fail "the other format was not written"
echo "ok: the recording is never overwritten by -o"

# an output is written beside its file and renamed over it once the format
# succeeded: a failed export leaves the previous file whole, no temporary
# is left, permissions follow the umask, and a device is written in place
mkdir -p "$WORK/keep"
echo "yesterday's profile" >"$WORK/keep/fg.html"
rc=0; "$PERFPORT" -q export -i "$WORK/pt.data" -f flamegraph -O counter=idle -o "$WORK/keep/fg.html" \
	2>"$WORK/err" || rc=$?
[ $rc -eq 2 ] || fail "flamegraph of a counter without data: exit $rc, want 2"
[ "$(cat "$WORK/keep/fg.html")" = "yesterday's profile" ] || fail "a failed export damaged the previous file"
(umask 027 && "$PERFPORT" -q export -i "$WORK/pt.data" -f folded -o "$WORK/keep/new.folded") ||
	fail "export folded: exit $?"
[ "$(stat -c %a "$WORK/keep/new.folded")" = 640 ] || fail "mode $(stat -c %a "$WORK/keep/new.folded") under umask 027"
chmod 600 "$WORK/keep/new.folded"
"$PERFPORT" -q export -i "$WORK/pt.data" -f folded -o "$WORK/keep/new.folded" || fail "export folded: exit $?"
[ "$(stat -c %a "$WORK/keep/new.folded")" = 600 ] || fail "a replaced file lost its mode 600"
long=$(printf 'l%.0s' $(seq 1 245)).folded
"$PERFPORT" -q export -i "$WORK/pt.data" -f folded -o "$WORK/keep/$long" || fail "a 252-byte file name: exit $?"
[ "$(ls -A "$WORK/keep" | grep -c perfport-)" -eq 0 ] || fail "a temporary was left: $(ls -A "$WORK/keep")"
"$PERFPORT" -q export -i "$WORK/pt.data" -f folded -o /dev/null || fail "export to /dev/null: exit $?"
[ -c /dev/null ] || fail "/dev/null is no longer a device"
# a writable file in a directory that takes no new file is written in place
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	chmod 755 "$WORK" && mkdir -p "$WORK/ro" && cp "$WORK/pt.data" "$WORK/ro/in.data" &&
		chmod 644 "$WORK/ro/in.data"
	echo old >"$WORK/ro/out.folded" && chmod 666 "$WORK/ro/out.folded" && chmod 555 "$WORK/ro"
	as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
	as_nobody "$PERFPORT" -q export -i "$WORK/ro/in.data" -f folded -o "$WORK/ro/out.folded" ||
		fail "a writable file in a read-only directory: exit $?"
	[ "$(wc -l <"$WORK/ro/out.folded")" -gt 1 ] || fail "the file in a read-only directory was not written"
	rc=0; as_nobody "$PERFPORT" -q export -i "$WORK/ro/in.data" -f folded -o "$WORK/ro/new.folded" \
		2>"$WORK/err" || rc=$?
	[ $rc -eq 2 ] && grep -q "cannot write '$WORK/ro/new.folded': Permission denied" "$WORK/err" ||
		fail "a new file in a read-only directory: exit $rc: $(cat "$WORK/err")"
	chmod 755 "$WORK/ro"
else
	echo "note: not root or no setpriv: the read-only directory case is not checked"
fi
echo "ok: outputs replace their file only when complete"
echo "ok: export"
