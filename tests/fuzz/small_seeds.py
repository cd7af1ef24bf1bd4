#!/usr/bin/python3
"""small_seeds.py OUT FILE...: small fuzzing seeds cut from perf.data files.

Each file-mode recording gives a seed of its header, attrs and ids with the
first records of its data section (whole records, at most 2 KiB) and no
feature sections; each pipe-mode one its first 4 KiB of whole records. The
reader's every path is still reached, at hundreds of executions a second
instead of tens on 1 MiB seeds.
"""
import hashlib
import os
import struct
import sys


def records(buf, off, end, limit):
    """offset past the whole records from @off that fit in @limit bytes"""
    pos = off
    while pos + 8 <= end:
        size = struct.unpack_from("<H", buf, pos + 6)[0]
        if size < 8 or pos + size > end or pos + size - off > limit:
            break
        pos += size
    return pos


def cut(data):
    if data[:8] == b"PERFILE2" and len(data) >= 104:
        hdr_size, attr_size, attrs_off, attrs_size, data_off, data_size = struct.unpack_from("<QQQQQQ", data, 8)
        if hdr_size == 0 or data_off >= len(data) or data_off < hdr_size:
            return None
        if hdr_size == 16:             # pipe mode: the header, then records
            return bytes(data[:records(data, 16, len(data), 4096)])
        end = records(data, data_off, min(len(data), data_off + data_size), 2048)
        out = bytearray(data[:end])
        struct.pack_into("<Q", out, 48, end - data_off)     # data size
        struct.pack_into("<32s", out, 72, bytes(32))        # no features
        return bytes(out)
    return None


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    n = 0
    for path in sys.argv[2:]:
        try:
            data = open(path, "rb").read(8 << 20)
        except OSError:
            continue
        seed = cut(data)
        if seed:
            name = hashlib.md5(seed).hexdigest()[:16]
            with open(os.path.join(out, "small-" + name), "wb") as f:
                f.write(seed)
            n += 1
    print("%d small seeds in %s" % (n, out))


main()
