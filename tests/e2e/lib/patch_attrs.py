"""Rewrite the attrs of a pipe-mode perf.data (little-endian), for tests of
what perfport makes of events this machine cannot record.

    patch_attrs.py SRC DST [--drop-names] ATTR...

Each ATTR applies to the next HEADER_ATTR record, in order, and is a comma
list of key=value (numbers in any base Python reads): type, config, flags
(replaces the context, precision and host/guest bits: exclude_user 1<<4,
exclude_kernel 1<<5, exclude_hv 1<<6, precise_ip 1<<15 (2 bits),
exclude_host 1<<19, exclude_guest 1<<20), bp_addr, bp_type; keys left out
keep the recording's value. There must be as many ATTRs as HEADER_ATTR
records. --drop-names takes out what names the events (EVENT_UPDATE records
and the EVENT_DESC feature), so that a reader makes names from the attrs.
"""
import struct
import sys

HEADER_ATTR, EVENT_UPDATE, HEADER_FEATURE, FEAT_EVENT_DESC = 64, 78, 80, 12
FLAG_BITS = 7 << 4 | 3 << 15 | 3 << 19
# key: (offset in the attr, struct format)
FIELDS = {"type": (0, "<I"), "config": (8, "<Q"), "bp_type": (52, "<I"), "bp_addr": (56, "<Q")}


def patch_attr(rec, spec):
    attr = 8  # after the record header
    for item in filter(None, spec.split(",")):
        key, value = item.split("=", 1)
        value = int(value, 0)
        if key == "flags":
            old = struct.unpack_from("<Q", rec, attr + 40)[0]
            struct.pack_into("<Q", rec, attr + 40, old & ~FLAG_BITS | value)
        elif key in FIELDS:
            off, fmt = FIELDS[key]
            struct.pack_into(fmt, rec, attr + off, value)
        else:
            sys.exit("unknown attr key %r" % key)


def main(argv):
    args = argv[1:]
    drop = "--drop-names" in args
    args = [a for a in args if a != "--drop-names"]
    if len(args) < 2:
        sys.exit(__doc__)
    src, dst, specs = args[0], args[1], args[2:]
    d = open(src, "rb").read()
    out, off, k = bytearray(d[:16]), 16, 0
    while off + 8 <= len(d):
        t, _misc, size = struct.unpack_from("<IHH", d, off)
        if size < 8:
            sys.exit("a record of size %d at %d" % (size, off))
        rec = bytearray(d[off:off + size])
        off += size
        if drop and (t == EVENT_UPDATE or
                     (t == HEADER_FEATURE and struct.unpack_from("<Q", rec, 8)[0] == FEAT_EVENT_DESC)):
            continue
        if t == HEADER_ATTR:
            if k >= len(specs):
                sys.exit("more HEADER_ATTR records than the %d attrs given" % len(specs))
            patch_attr(rec, specs[k])
            k += 1
        out += rec
    if k != len(specs):
        sys.exit("%d HEADER_ATTR records, %d attrs given" % (k, len(specs)))
    open(dst, "wb").write(out)


if __name__ == "__main__":
    main(sys.argv)
