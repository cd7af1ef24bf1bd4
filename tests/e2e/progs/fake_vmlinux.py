#!/usr/bin/python3
"""Write assembler for a stand-in vmlinux: every text symbol of a kallsyms as
an absolute function symbol, moved so that _text sits at BASE (the address a
vmlinux is linked at, before KASLR). usage: fake_vmlinux.py KALLSYMS BASE > vm.s"""
import re
import sys

lines = [l.split() for l in open(sys.argv[1])]
base = int(sys.argv[2], 16)
text = next(int(f[0], 16) for f in lines if len(f) >= 3 and f[2] == "_text")
shift = text - base
seen = set()
print(f".globl _text\n.set _text, {base:#x}")
for f in lines:
    if len(f) < 3 or f[1] not in "tTwW" or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", f[2]):
        continue
    if f[2] in seen or f[2] == "_text":
        continue
    seen.add(f[2])
    # the binding of kallsyms' type letter: W/w weak, T global; local (t)
    # symbols are made global too (ld drops local absolute symbols), so the
    # image keeps every name but not every binding
    bind = ".weak" if f[1] in "wW" else ".globl"
    print(f"{bind} {f[2]}\n.type {f[2]}, @function\n.set {f[2]}, {int(f[0], 16) - shift:#x}")
