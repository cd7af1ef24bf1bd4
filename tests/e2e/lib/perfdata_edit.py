#!/usr/bin/python3
"""Edit a recording the way a slow host or a damaged file would have
written it. IN is a perf.data file (file mode, not compressed).

    perfdata_edit.py delay-switches IN OUT MAX_NS [SEED]
    perfdata_edit.py short-raw IN OUT BYTES

delay-switches: each PERF_RECORD_SWITCH(_CPU_WIDE) switch-out's sample_id
time is moved later by a pseudo-random delay of up to MAX_NS, as on a slow
or loaded host (measured there: 40 us to 1.7 ms), never up to the thread's
next record (its switch-in, its next sample) or a sched_switch sample that
switches it in (next_pid, at the offset this machine's tracefs format
gives: the file must be recorded here): the same events, written later.
Nor past the last time of its round (the records before its
FINISHED_ROUND): the record stays where it is in the file, and a real one
written later would lie later in its CPU's buffer, in that round or a later
one. A time past its round's last would move the round's end, which a
reader of the file takes (as perf does) for the time before which the next
round holds nothing, and the reader would deliver the next round's earlier
records too late to put them in order - something no recording does.

short-raw: every tracepoint sample's raw data says it holds only BYTES
bytes (its record is unchanged): fields past them are out of reach, as in
a record the kernel or a converter cut short.

Prints what it changed.
"""
import random
import struct
import sys

SAMPLE, SWITCH, SWITCH_CPU_WIDE, FINISHED_ROUND = 9, 14, 15, 68
MISC_SWITCH_OUT = 1 << 13
S_IP, S_TID, S_TIME, S_ADDR, S_READ, S_CALLCHAIN, S_ID = 1, 2, 4, 8, 16, 32, 64
S_CPU, S_PERIOD, S_STREAM_ID, S_RAW, S_IDENTIFIER = 128, 256, 512, 1024, 1 << 16
SAMPLE_ID_ALL = 1 << 18


class Recording:
    """The file's bytes, its attributes and its records."""

    def __init__(self, path):
        self.buf = bytearray(open(path, "rb").read())
        if self.buf[:8] != b"PERFILE2":
            sys.exit("%s: not a perf.data file in file mode" % path)
        attr_size, = struct.unpack_from("<Q", self.buf, 16)
        off, size = struct.unpack_from("<QQ", self.buf, 24)
        self.attrs = []
        for at in range(off, off + size, attr_size):
            sample_type, = struct.unpack_from("<Q", self.buf, at + 24)
            flags, = struct.unpack_from("<Q", self.buf, at + 40)
            ids_off, ids_size = struct.unpack_from("<QQ", self.buf, at + attr_size - 16)
            ids = struct.unpack_from("<%dQ" % (ids_size // 8), self.buf, ids_off)
            self.attrs.append((sample_type, bool(flags & SAMPLE_ID_ALL), ids))
        self.by_id = {i: a for a in self.attrs for i in a[2]}

    def attr_of(self, at, size, is_sample):
        if len(self.attrs) == 1:
            return self.attrs[0]
        if not self.attrs[0][0] & S_IDENTIFIER:
            sys.exit("several events without PERF_SAMPLE_IDENTIFIER: cannot tell records apart")
        ident, = struct.unpack_from("<Q", self.buf, at + 8 if is_sample else at + size - 8)
        return self.by_id.get(ident)

    def records(self):
        """(type, misc, where, size, its attribute) of each record."""
        data_off, data_size = struct.unpack_from("<QQ", self.buf, 40)
        at, end = data_off, data_off + data_size
        while at + 8 <= end:
            typ, misc, size = struct.unpack_from("<IHH", self.buf, at)
            if size < 8:
                sys.exit("record of size %d at %d" % (size, at))
            if typ == SAMPLE or typ < 64:
                yield typ, misc, at, size, self.attr_of(at, size, typ == SAMPLE)
            elif typ == FINISHED_ROUND:
                yield typ, misc, at, size, None
            at += size

    def sample_fields(self, at, st):
        """Where a sample's TID field lies."""
        return at + 8 + 8 * bool(st & S_IDENTIFIER) + 8 * bool(st & S_IP)

    def raw_at(self, p, st):
        """Where a sample's raw data size lies, its fields read from @p (its
        TID); None for a sample without raw data or one whose layout is not known."""
        if not st & S_RAW or st & S_READ or not st & S_TID or not st & S_TIME:
            return None
        p += 16 + 8 * bool(st & S_ADDR) + 8 * bool(st & S_ID) + 8 * bool(st & S_STREAM_ID)
        p += 8 * bool(st & S_CPU) + 8 * bool(st & S_PERIOD)
        if st & S_CALLCHAIN:
            nr, = struct.unpack_from("<Q", self.buf, p)
            p += 8 + 8 * nr
        return p


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


def delay_switches(rec, max_ns, rng):
    np_off, np_size = next_pid_field()
    buf, recs = rec.buf, []
    rounds = [0]  # each round's last time, as written
    for typ, misc, at, size, a in rec.records():
        if typ == FINISHED_ROUND:
            rounds.append(0)
        if not a:
            continue
        st = a[0]
        if typ == SAMPLE:
            p = rec.sample_fields(at, st)
            if st & S_TID and st & S_TIME:
                _, tid = struct.unpack_from("<II", buf, p)
                t, = struct.unpack_from("<Q", buf, p + 8)
                recs.append((tid, t, "sample", None, None))
                rounds[-1] = max(rounds[-1], t)
                r = rec.raw_at(p, st)
                if r is not None:
                    raw_size, = struct.unpack_from("<I", buf, r)
                    if raw_size >= np_off + np_size:
                        nxt = int.from_bytes(buf[r + 4 + np_off:r + 4 + np_off + np_size],
                                             "little", signed=True)
                        if nxt:
                            recs.append((nxt, t, "in", None, None))
        elif a[1]:  # a kernel record: its sample_id trailer
            fields = trailer_fields(st)
            p = at + size - 8 * len(fields)
            if S_TID in fields and S_TIME in fields:
                _, tid = struct.unpack_from("<II", buf, p + 8 * fields.index(S_TID))
                tpos = p + 8 * fields.index(S_TIME)
                t, = struct.unpack_from("<Q", buf, tpos)
                out = typ in (SWITCH, SWITCH_CPU_WIDE) and misc & MISC_SWITCH_OUT
                recs.append((tid, t, "out" if out else "other", tpos, len(rounds) - 1))
                rounds[-1] = max(rounds[-1], t)
    per_tid = {}
    for r in recs:
        per_tid.setdefault(r[0], []).append(r)
    moved, largest = 0, 0
    for tid, rs in per_tid.items():
        rs.sort(key=lambda r: r[1])
        for i, (_, t, kind, tpos, rnd) in enumerate(rs):
            if kind != "out" or not tid:
                continue
            room = rs[i + 1][1] - t - 1 if i + 1 < len(rs) else max_ns
            d = min(max_ns, room, rounds[rnd] - t)
            if d <= 0:
                continue
            d = rng.randint(d // 2, d)
            struct.pack_into("<Q", buf, tpos, t + d)
            moved += 1
            largest = max(largest, d)
    print("%d switch-out records moved later, by up to %.3f ms" % (moved, largest / 1e6))


def short_raw(rec, keep):
    n = 0
    for typ, _, at, _, a in rec.records():
        if typ != SAMPLE or not a:
            continue
        r = rec.raw_at(rec.sample_fields(at, a[0]), a[0])
        if r is None:
            continue
        raw_size, = struct.unpack_from("<I", rec.buf, r)
        if raw_size > keep:
            struct.pack_into("<I", rec.buf, r, keep)
            n += 1
    print("%d samples' raw data cut to %d bytes" % (n, keep))


def main():
    if len(sys.argv) < 5 or sys.argv[1] not in ("delay-switches", "short-raw"):
        sys.exit(__doc__)
    rec = Recording(sys.argv[2])
    if sys.argv[1] == "delay-switches":
        delay_switches(rec, int(sys.argv[4]),
                       random.Random(int(sys.argv[5]) if len(sys.argv) > 5 else 1))
    else:
        short_raw(rec, int(sys.argv[4]))
    open(sys.argv[3], "wb").write(rec.buf)


if __name__ == "__main__":
    main()
