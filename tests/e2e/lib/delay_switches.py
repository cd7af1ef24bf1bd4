#!/usr/bin/python3
"""Make a recording whose switch-out records trail their sched_switch
samples, as on a slow or loaded host (measured there: 40 us to 1.7 ms).

    delay_switches.py IN OUT MAX_NS [SEED]

IN is a perf.data file (file mode, not compressed) recorded per task with
-e sched:sched_switch and --switch-events. Each PERF_RECORD_SWITCH(_CPU_WIDE)
switch-out's sample_id time is moved later by a pseudo-random delay of up to
MAX_NS, never up to the thread's next record (its switch-in, its next
sample) or a sched_switch sample that switches it in (next_pid, at the
offset this machine's tracefs format gives: the file must be recorded here):
the same events, only written later. Prints how many were moved and the
largest delay.
"""
import random
import struct
import sys

SAMPLE, SWITCH, SWITCH_CPU_WIDE = 9, 14, 15
MISC_SWITCH_OUT = 1 << 13
S_IP, S_TID, S_TIME, S_ID, S_STREAM_ID, S_CPU, S_IDENTIFIER = 1, 2, 4, 64, 512, 128, 1 << 16
SAMPLE_ID_ALL = 1 << 18


def attrs_of(buf):
    """[(sample_type, sample_id_all, [ids])] of the file's attributes."""
    attr_size, = struct.unpack_from("<Q", buf, 16)
    off, size = struct.unpack_from("<QQ", buf, 24)
    out = []
    for at in range(off, off + size, attr_size):
        sample_type, = struct.unpack_from("<Q", buf, at + 24)
        flags, = struct.unpack_from("<Q", buf, at + 40)
        ids_off, ids_size = struct.unpack_from("<QQ", buf, at + attr_size - 16)
        ids = list(struct.unpack_from("<%dQ" % (ids_size // 8), buf, ids_off))
        out.append((sample_type, bool(flags & SAMPLE_ID_ALL), ids))
    return out


def next_pid_field():
    """(offset, size) of sched_switch's next_pid in this kernel's raw data."""
    for d in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        try:
            text = open(d + "/events/sched/sched_switch/format").read()
        except OSError:
            continue
        for line in text.splitlines():
            if " next_pid;" in line:
                parts = dict(p.strip().split(":", 1) for p in line.split(";") if ":" in p)
                return int(parts["offset"]), int(parts["size"])
    sys.exit("sched_switch's format is not readable in tracefs")


def trailer_fields(sample_type):
    return [b for b in (S_TID, S_TIME, S_ID, S_STREAM_ID, S_CPU, S_IDENTIFIER) if sample_type & b]


S_ADDR, S_READ, S_CALLCHAIN, S_PERIOD, S_RAW = 8, 16, 32, 256, 1024


def raw_next_pid(buf, p, st, off, size):
    """A tracepoint sample's next_pid, its fields read from @p (after TIME);
    None for a sample without raw data, or one whose layout is not known."""
    if not st & S_RAW or st & S_READ:
        return None
    p += 8 * bool(st & S_ADDR) + 8 * bool(st & S_ID) + 8 * bool(st & S_STREAM_ID)
    p += 8 * bool(st & S_CPU) + 8 * bool(st & S_PERIOD)
    if st & S_CALLCHAIN:
        nr, = struct.unpack_from("<Q", buf, p)
        p += 8 + 8 * nr
    raw_size, = struct.unpack_from("<I", buf, p)
    if raw_size < off + size:
        return None
    return int.from_bytes(buf[p + 4 + off:p + 4 + off + size], "little", signed=True)


def main():
    src, dst, max_ns = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    buf = bytearray(open(src, "rb").read())
    if buf[:8] != b"PERFILE2":
        sys.exit("%s: not a perf.data file in file mode" % src)
    attrs = attrs_of(buf)
    np_off, np_size = next_pid_field()
    by_id = {i: a for a in attrs for i in a[2]}
    data_off, data_size = struct.unpack_from("<QQ", buf, 40)

    def attr_of_record(at, size, is_sample):
        if len(attrs) == 1:
            return attrs[0]
        st = attrs[0][0]
        if not st & S_IDENTIFIER:
            sys.exit("several events without PERF_SAMPLE_IDENTIFIER: cannot tell records apart")
        ident, = struct.unpack_from("<Q", buf, at + 8 if is_sample else at + size - 8)
        return by_id.get(ident)

    # every record's (tid, time, kind, where its time lies)
    recs = []
    at, end = data_off, data_off + data_size
    while at + 8 <= end:
        typ, misc, size = struct.unpack_from("<IHH", buf, at)
        if size < 8:
            sys.exit("record of size %d at %d" % (size, at))
        if typ == SAMPLE:
            a = attr_of_record(at, size, True)
            if a:
                st, p = a[0], at + 8
                p += 8 if st & S_IDENTIFIER else 0
                p += 8 if st & S_IP else 0
                if st & S_TID and st & S_TIME:
                    _, tid = struct.unpack_from("<II", buf, p)
                    t, = struct.unpack_from("<Q", buf, p + 8)
                    recs.append((tid, t, "sample", None))
                    nxt = raw_next_pid(buf, p + 16, st, np_off, np_size)
                    if nxt:
                        recs.append((nxt, t, "in", None))
        elif typ < 64:  # a kernel record: its sample_id trailer
            a = attr_of_record(at, size, False)
            if a and a[1]:
                fields = trailer_fields(a[0])
                p = at + size - 8 * len(fields)
                if S_TID in fields and S_TIME in fields:
                    _, tid = struct.unpack_from("<II", buf, p + 8 * fields.index(S_TID))
                    tpos = p + 8 * fields.index(S_TIME)
                    t, = struct.unpack_from("<Q", buf, tpos)
                    out = typ in (SWITCH, SWITCH_CPU_WIDE) and misc & MISC_SWITCH_OUT
                    recs.append((tid, t, "out" if out else "other", tpos))
        at += size
    per_tid = {}
    for r in recs:
        per_tid.setdefault(r[0], []).append(r)
    moved, largest = 0, 0
    for tid, rs in per_tid.items():
        rs.sort(key=lambda r: r[1])
        for i, (_, t, kind, tpos) in enumerate(rs):
            if kind != "out" or not tid:
                continue
            room = rs[i + 1][1] - t - 1 if i + 1 < len(rs) else max_ns
            d = min(max_ns, room)
            if d <= 0:
                continue
            d = rng.randint(d // 2, d)
            struct.pack_into("<Q", buf, tpos, t + d)
            moved += 1
            largest = max(largest, d)
    open(dst, "wb").write(buf)
    print("%d switch-out records moved later, by up to %.3f ms" % (moved, largest / 1e6))


if __name__ == "__main__":
    main()
