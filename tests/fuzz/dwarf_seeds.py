#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Seeds for the DWARF readers' fuzz target (fuzz_dwarf.c): each ELF
given has its .debug_info, .debug_abbrev, .debug_line, .debug_str,
.debug_line_str, .debug_rnglists and .debug_ranges written into DIR as
the target reads them (seven little-endian 32-bit lengths, then the
bytes).  usage: dwarf_seeds.py DIR ELF..."""
import os
import struct
import sys

NAMES = [".debug_info", ".debug_abbrev", ".debug_line", ".debug_str",
         ".debug_line_str", ".debug_rnglists", ".debug_ranges"]


def sections(path):
    b = open(path, "rb").read()
    if b[:4] != b"\x7fELF" or b[4] != 2 or b[5] != 1:
        raise SystemExit(f"{path}: not a little-endian ELF64 file")
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3a)
    hdrs = [struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize) for i in range(shnum)]
    stroff = hdrs[shstrndx][4]
    out = {}
    for h in hdrs:
        end = b.index(b"\0", stroff + h[0])
        name = b[stroff + h[0]:end].decode()
        if h[2] & 0x800:  # SHF_COMPRESSED: not used as a seed
            raise SystemExit(f"{path}: compressed {name}")
        out[name] = b[h[4]:h[4] + h[5]] if h[1] != 8 else b""
    return [out.get(n, b"") for n in NAMES]


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    for path in sys.argv[2:]:
        secs = sections(path)
        blob = struct.pack("<7I", *[len(s) for s in secs]) + b"".join(secs)
        name = os.path.join(d, "dw-" + os.path.basename(path))
        with open(name, "wb") as f:
            f.write(blob)
        print(f"{name}: {len(blob)} bytes")


main()
