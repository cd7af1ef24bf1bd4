"""Write a perf.data (file mode, little-endian) of one cpu-clock event whose
samples land in MODULES distinct mapped files of one process, REPEAT
samples each: the shape that makes per-module work quadratic. The files
do not exist, so each module's frames stay unnamed (MODULE+0x...).

    many_modules.py OUT MODULES REPEAT
"""
import struct
import sys

PERF_RECORD_MMAP2, PERF_RECORD_SAMPLE, PERF_RECORD_COMM = 10, 9, 3
# IP | TID | TIME | PERIOD
SAMPLE_TYPE = 1 | 2 | 4 | 256


def attr():
    # struct perf_event_attr, 128 bytes (version 7)
    a = bytearray(128)
    struct.pack_into("<IIQQQQQ", a, 0, 1, 128, 0, 1000000, SAMPLE_TYPE, 0, 1 << 1)
    return bytes(a)  # software cpu-clock, period 1 ms, inherit; no sample_id_all


def main(out, modules, repeat):
    pid = 4242
    data = bytearray()
    comm = struct.pack("<II", pid, pid) + b"many\0\0\0\0"
    data += struct.pack("<IHH", PERF_RECORD_COMM, 0, 8 + len(comm)) + comm
    for i in range(modules):
        name = b"/gone/lib%d.so\0" % i
        name += b"\0" * (-len(name) % 8)
        body = struct.pack("<IIQQQIIQQII", pid, pid, 0x7f0000000000 + i * 0x10000, 0x10000,
                           0, 8, 1, 100000 + i, 0, 5, 2) + name
        data += struct.pack("<IHH", PERF_RECORD_MMAP2, 2, 8 + len(body)) + body
    t = 1000000000
    for r in range(repeat):
        for i in range(modules):
            t += 1000
            body = struct.pack("<QIIQQ", 0x7f0000000000 + i * 0x10000 + 0x100 + 16 * r,
                               pid, pid, t, 1000000)
            data += struct.pack("<IHH", PERF_RECORD_SAMPLE, 2, 8 + len(body)) + body
    hdr_size, attr_size = 104, 128 + 16
    attrs_off = hdr_size
    data_off = attrs_off + attr_size
    f = open(out, "wb")
    f.write(b"PERFILE2" + struct.pack("<QQ", hdr_size, attr_size))
    f.write(struct.pack("<QQ", attrs_off, attr_size))      # attrs
    f.write(struct.pack("<QQ", data_off, len(data)))       # data
    f.write(struct.pack("<QQ", 0, 0))                      # event types
    f.write(bytes(32))                                     # features
    f.write(attr() + struct.pack("<QQ", 0, 0))             # no ids
    f.write(data)
    f.close()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
