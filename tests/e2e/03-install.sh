#!/usr/bin/env bash
# make install puts the binary, the man page and the SDK headers under
# DESTDIR/PREFIX, and the installed binary runs.
. "$(dirname "$0")/lib/common.sh"
make -s -C "$TOP" install DESTDIR="$WORK/root" PREFIX=/opt/pp >"$WORK/install.log" 2>&1 ||
	{ cat "$WORK/install.log"; fail "make install failed"; }
for f in bin/perfport share/man/man1/perfport.1 include/perfport/version.h include/perfport/plugin.h share/perfport/state-rules share/perfport/roots/go.roots \
	lib/perfport/plugins/folded.so; do
	[ -f "$WORK/root/opt/pp/$f" ] || fail "not installed: $f"
done
"$WORK/root/opt/pp/bin/perfport" --version | has '^perfport ' || fail "installed binary does not run"
"$WORK/root/opt/pp/bin/perfport" formats | has "^folded .*" || fail "installed binary finds no folded plugin"
"$WORK/root/opt/pp/bin/perfport" formats folded | has "plugin: $WORK/root/opt/pp/bin/../lib/perfport/plugins/folded.so" ||
	fail "installed binary does not use its own plugins: $("$WORK/root/opt/pp/bin/perfport" formats folded | sed -n 2p)"
make -s -C "$TOP" uninstall DESTDIR="$WORK/root" PREFIX=/opt/pp >/dev/null 2>&1
[ ! -e "$WORK/root/opt/pp/bin/perfport" ] || fail "uninstall left the binary"
echo "ok: install and uninstall"
