#!/usr/bin/env bash
# The SDK: make install puts plugin.h and perfport-plugin.pc in a prefix;
# samples/plugin-example builds against that prefix with pkg-config alone,
# installs into the plugin directory the .pc names, and the installed
# perfport finds and runs it: its CSV agrees with perfport report --json.
. "$(dirname "$0")/lib/common.sh"
need_python
command -v pkg-config >/dev/null || skip "pkg-config is not installed"
root="$WORK/root"
make -s -C "$TOP" install DESTDIR="$root" PREFIX=/opt/pp >"$WORK/install.log" 2>&1 ||
	{ cat "$WORK/install.log"; fail "make install failed"; }
pc="$root/opt/pp/lib/pkgconfig/perfport-plugin.pc"
[ -f "$pc" ] || fail "no perfport-plugin.pc installed"
export PKG_CONFIG_PATH="$root/opt/pp/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$root"
case "$(pkg-config --variable=plugindir perfport-plugin)" in */opt/pp/lib/perfport/plugins) ;; *) false ;; esac ||
	fail "plugindir: $(pkg-config --variable=plugindir perfport-plugin)"
cp -r "$TOP/samples/plugin-example" "$WORK/example"
make -s -C "$WORK/example" >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; fail "the sample plugin does not build against the installed SDK"; }
make -s -C "$WORK/example" install DESTDIR="$root" PLUGINDIR=/opt/pp/lib/perfport/plugins >/dev/null ||
	fail "the sample plugin does not install"
pp="$root/opt/pp/bin/perfport"
"$pp" formats | has '^topcsv ' || fail "the installed perfport does not list topcsv"
"$pp" -q export -i "$TOP/samples/offcpu.perf.data" -f topcsv -O top=3 -o "$WORK/top.csv" ||
	fail "export -f topcsv: exit $?"
"$pp" -q report --json -i "$TOP/samples/offcpu.perf.data" >"$WORK/tree.json"
$PY - "$WORK/top.csv" "$WORK/tree.json" <<'PY' || fail "topcsv output"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
tree = json.load(open(sys.argv[2]))
self = {}
for f in tree["frames"]:
    for c, v in f["self"].items():
        self.setdefault(c, {}).setdefault(f["function"], 0)
        self[c][f["function"]] += v["ns"]
for c in tree["totals"]:
    want = sorted(self.get(c, {}).items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    want = [kv for kv in want if kv[1]]
    got = [(r["function"], int(r["self_ns"])) for r in rows if r["counter"] == c]
    print("%-12s %s" % (c, got))
    if got != want:
        sys.exit("%s: %s, the tree's top 3: %s" % (c, got, want))
print("ok")
PY
echo "ok: the SDK builds and installs an out-of-tree plugin that the installed perfport runs"
