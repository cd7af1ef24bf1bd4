/* SPDX-License-Identifier: MIT */
/*
 * sample.c - perf_event_attr decoding and the PERF_RECORD_SAMPLE layout.
 *
 * A sample is the fields its event's sample_type selects, in the kernel's
 * fixed order (perf_output_sample()). Non-sample records of an event with
 * sample_id_all end in a trailer: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER.
 * In a swapped file every field is turned native in place as it is read,
 * so the record can be handed on as it is; tracepoint RAW data stays in the
 * recording's order (libtraceevent reads it with the file's endianness).
 */
#include "perf.h"

#include "bytes.h"

static uint64_t bitrev64(uint64_t v)
{
	uint64_t r = 0;

	for (int i = 0; i < 64; i++) {
		r = (r << 1) | (v & 1);
		v >>= 1;
	}
	return r;
}

void perf_attr_decode(struct perf_attr *a, const void *buf, size_t len, bool swap)
{
	const uint8_t *p = buf;

	*a = (struct perf_attr){ 0 };
#define U32(off, f) do { if (len >= (off) + 4) a->f = load_u32(p + (off), swap); } while (0)
#define U64(off, f) do { if (len >= (off) + 8) a->f = load_u64(p + (off), swap); } while (0)
	U32(0, type);
	U32(4, size);
	U64(8, config);
	U64(16, sample_period);
	U64(24, sample_type);
	U64(32, read_format);
	if (len >= 48) {
		/* A bitfield: big-endian compilers allocate it from the top bit. */
		a->flags = load_u64(p + 40, swap);
		if (swap)
			a->flags = bitrev64(a->flags);
	}
	U32(48, wakeup_events);
	U32(52, bp_type);
	U64(56, config1);
	U64(64, config2);
	U64(72, branch_sample_type);
	U64(80, sample_regs_user);
	U32(88, sample_stack_user);
	if (len >= 96)
		a->clockid = (int32_t)load_u32(p + 92, swap);
	U64(96, sample_regs_intr);
	U32(104, aux_watermark);
	if (len >= 110)
		a->sample_max_stack = load_u16(p + 108, swap);
	U32(112, aux_sample_size);
	U64(120, sig_data);
	U64(128, config3);
#undef U32
#undef U64
}

void perf_evsel_layout(struct perf_evsel *e)
{
	uint64_t t = e->attr.sample_type;
	int n;

	e->fixed_period = e->attr.flags & PERF_ATTR_FLAG_FREQ ? 0 : e->attr.sample_period;

	if (t & PERF_SAMPLE_IDENTIFIER) {
		e->id_pos = 0;
	} else if (t & PERF_SAMPLE_ID) {
		n = 0;
		n += !!(t & PERF_SAMPLE_IP);
		n += !!(t & PERF_SAMPLE_TID);
		n += !!(t & PERF_SAMPLE_TIME);
		n += !!(t & PERF_SAMPLE_ADDR);
		e->id_pos = n;
	} else {
		e->id_pos = -1;
	}

	if (t & PERF_SAMPLE_IDENTIFIER)
		e->is_pos = 1;
	else if (t & PERF_SAMPLE_ID)
		e->is_pos = 1 + !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU);
	else
		e->is_pos = -1;

	if (t & PERF_SAMPLE_TIME)
		e->time_pos = !!(t & PERF_SAMPLE_IDENTIFIER) + !!(t & PERF_SAMPLE_IP) +
			      !!(t & PERF_SAMPLE_TID);
	else
		e->time_pos = -1;

	e->simple = !(t & ~(uint64_t)(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
					PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
					PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
					PERF_SAMPLE_CALLCHAIN));
	e->simple_slots = (uint8_t)__builtin_popcountll(t); /* once: no popcnt on baseline x86-64 */

	e->trailer_size = 0;
	if (e->attr.flags & PERF_ATTR_FLAG_SAMPLE_ID_ALL) {
		n = !!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) +
		    !!(t & PERF_SAMPLE_ID) + !!(t & PERF_SAMPLE_STREAM_ID) +
		    !!(t & PERF_SAMPLE_CPU) + !!(t & PERF_SAMPLE_IDENTIFIER);
		e->trailer_size = 8 * n;
	}
}

/* TID and CPU are two u32 in one u64 slot. */
static void cur_u32_pair(struct cur *c, uint32_t *a, uint32_t *b)
{
	*a = cur_u32(c);
	*b = cur_u32(c);
}

static int parse_read(const struct perf_evsel *e, struct cur *c, struct perf_sample *s)
{
	uint64_t rf = e->attr.read_format;
	unsigned stride = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);

	s->read.stride = stride;
	if (rf & PERF_FORMAT_GROUP) {
		s->read.nr = cur_u64(c);
		if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
			s->read.time_enabled = cur_u64(c);
		if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
			s->read.time_running = cur_u64(c);
		if (s->read.nr > cur_left(c) / 8 / stride)
			return -1;
		s->read.values = (const uint64_t *)cur_u64_array(c, s->read.nr * stride);
	} else {
		/* value, [enabled], [running], [id], [lost]: values points at value;
		 * the id is not adjacent to it, so it is kept in one_id */
		uint8_t *value = cur_u64_array(c, 1);

		if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
			s->read.time_enabled = cur_u64(c);
		if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
			s->read.time_running = cur_u64(c);
		if (rf & PERF_FORMAT_ID)
			s->read.one_id = cur_u64(c);
		if (rf & PERF_FORMAT_LOST)
			cur_u64(c);
		s->read.nr = 1;
		s->read.stride = 1; /* id/lost are not adjacent to value here */
		s->read.values = (const uint64_t *)value;
	}
	return c->bad ? -1 : 0;
}

static int parse_regs(struct cur *c, uint64_t mask, uint64_t *abi, uint64_t *omask,
		      const uint64_t **regs)
{
	*abi = cur_u64(c);
	*omask = mask;
	if (*abi)
		*regs = (const uint64_t *)cur_u64_array(c, (uint64_t)__builtin_popcountll(mask));
	return c->bad ? -1 : 0;
}

void perf_sample_blank(struct perf_sample *s, uint64_t period)
{
	size_t n = sizeof(*s);

	/*
	 * A size the compiler cannot see, so libc's memset() clears it: gcc
	 * 12 (-O2, generic tuning) inlines a clear of this size as `rep
	 * stosq`, whose start-up was 57% of a -g sample's parse (11 ns a
	 * sample, AMD EPYC; libc's vector stores take 3). As Linux's
	 * OPTIMIZER_HIDE_VAR().
	 */
	__asm__("" : "+r"(n));
	memset(s, 0, n);
	s->pid = s->tid = s->cpu = UINT32_MAX;
	s->period = period;
}

/*
 * A native sample of a "simple" event (perf_evsel_layout()): fixed u64
 * slots, then maybe a callchain. The same result as the general parse
 * below, without its cursor; a body too short for the fixed slots goes
 * to the general parse, which says where it ends. Return: as
 * perf_sample_parse(), or 1 to parse in general.
 */
static int parse_simple(const struct perf_evsel *e, const uint8_t *p, size_t len,
			struct perf_sample *s)
{
	uint64_t t = e->attr.sample_type;
	size_t slots = e->simple_slots;
	size_t words = len / 8, i = 0;

	if (words < slots)
		return 1;
	perf_sample_blank(s, e->fixed_period);
#define SLOT(v) ((v) = load_u64(p + 8 * i++, false))
	/* TID and CPU: two u32 in one slot, the first at the lower address */
#define PAIR(a, b) ((a) = load_u32(p + 8 * i, false), (b) = load_u32(p + 8 * i++ + 4, false))
	if (t & PERF_SAMPLE_IDENTIFIER)
		SLOT(s->id);
	if (t & PERF_SAMPLE_IP)
		SLOT(s->ip);
	if (t & PERF_SAMPLE_TID)
		PAIR(s->pid, s->tid);
	if (t & PERF_SAMPLE_TIME)
		SLOT(s->time);
	if (t & PERF_SAMPLE_ADDR)
		SLOT(s->addr);
	if (t & PERF_SAMPLE_ID)
		SLOT(s->id);
	if (t & PERF_SAMPLE_STREAM_ID)
		SLOT(s->stream_id);
	if (t & PERF_SAMPLE_CPU) {
		uint32_t res;

		PAIR(s->cpu, res);
		(void)res;
	}
	if (t & PERF_SAMPLE_PERIOD)
		SLOT(s->period);
	if (t & PERF_SAMPLE_CALLCHAIN) {
		SLOT(s->callchain_nr);
		if (s->callchain_nr > words - i)
			return -1;
		s->callchain = (const uint64_t *)(p + 8 * i);
	}
#undef PAIR
#undef SLOT
	return 0;
}

int perf_sample_parse(const struct perf_evsel *e, void *body, size_t len, bool swap,
		      struct perf_sample *s)
{
	uint64_t t = e->attr.sample_type;
	struct cur c;

	if (e->simple && !swap) {
		int ret = parse_simple(e, body, len, s);

		if (ret <= 0)
			return ret;
	}
	c = cur_make(body, len, swap);

	perf_sample_blank(s, e->fixed_period);
	if (t & PERF_SAMPLE_IDENTIFIER)
		s->id = cur_u64(&c);
	if (t & PERF_SAMPLE_IP)
		s->ip = cur_u64(&c);
	if (t & PERF_SAMPLE_TID)
		cur_u32_pair(&c, &s->pid, &s->tid);
	if (t & PERF_SAMPLE_TIME)
		s->time = cur_u64(&c);
	if (t & PERF_SAMPLE_ADDR)
		s->addr = cur_u64(&c);
	if (t & PERF_SAMPLE_ID)
		s->id = cur_u64(&c);
	if (t & PERF_SAMPLE_STREAM_ID)
		s->stream_id = cur_u64(&c);
	if (t & PERF_SAMPLE_CPU) {
		uint32_t res;
		cur_u32_pair(&c, &s->cpu, &res);
	}
	if (t & PERF_SAMPLE_PERIOD)
		s->period = cur_u64(&c);
	if ((t & PERF_SAMPLE_READ) && parse_read(e, &c, s))
		return -1;
	if (t & PERF_SAMPLE_CALLCHAIN) {
		s->callchain_nr = cur_u64(&c);
		if (s->callchain_nr > cur_left(&c) / 8)
			return -1;
		s->callchain = (const uint64_t *)cur_u64_array(&c, s->callchain_nr);
	}
	if (t & PERF_SAMPLE_RAW) {
		s->raw_size = cur_u32(&c);
		s->raw = cur_skip(&c, s->raw_size);
		/* The kernel pads RAW so what follows stays 8-aligned. */
		if (!s->raw || ((c.p - (uint8_t *)body) & 7))
			return -1;
	}
	if (t & PERF_SAMPLE_BRANCH_STACK) {
		s->branch_nr = cur_u64(&c);
		if (e->attr.branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) {
			s->branch_has_hw_idx = true;
			s->branch_hw_idx = cur_u64(&c);
		}
		if (s->branch_nr > cur_left(&c) / 24)
			return -1;
		s->branch = (const struct perf_branch_entry_rec *)
			cur_u64_array(&c, s->branch_nr * 3);
	}
	if ((t & PERF_SAMPLE_REGS_USER) &&
	    parse_regs(&c, e->attr.sample_regs_user, &s->user_regs_abi,
		       &s->user_regs_mask, &s->user_regs))
		return -1;
	if (t & PERF_SAMPLE_STACK_USER) {
		s->user_stack_size = cur_u64(&c);
		if (s->user_stack_size) {
			if (s->user_stack_size & 7)
				return -1; /* the kernel copies whole u64s */
			s->user_stack = cur_skip(&c, s->user_stack_size);
			s->user_stack_dyn_size = cur_u64(&c);
			if (s->user_stack_dyn_size > s->user_stack_size)
				s->user_stack_dyn_size = s->user_stack_size;
		}
	}
	if (t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
		s->weight = cur_u64(&c);
	if (t & PERF_SAMPLE_DATA_SRC)
		s->data_src = cur_u64(&c);
	if (t & PERF_SAMPLE_TRANSACTION)
		s->transaction = cur_u64(&c);
	if ((t & PERF_SAMPLE_REGS_INTR) &&
	    parse_regs(&c, e->attr.sample_regs_intr, &s->intr_regs_abi,
		       &s->intr_regs_mask, &s->intr_regs))
		return -1;
	if (t & PERF_SAMPLE_PHYS_ADDR)
		s->phys_addr = cur_u64(&c);
	if (t & PERF_SAMPLE_CGROUP)
		s->cgroup = cur_u64(&c);
	if (t & PERF_SAMPLE_DATA_PAGE_SIZE)
		s->data_page_size = cur_u64(&c);
	if (t & PERF_SAMPLE_CODE_PAGE_SIZE)
		s->code_page_size = cur_u64(&c);
	if (t & PERF_SAMPLE_AUX) {
		s->aux_size = cur_u64(&c);
		s->aux = cur_skip(&c, s->aux_size);
	}
	return c.bad ? -1 : 0;
}

int perf_sample_id_parse(const struct perf_evsel *e, void *body, size_t len, bool swap,
			 struct perf_sample *s)
{
	uint64_t t = e->attr.sample_type;
	struct cur c;

	perf_sample_blank(s, 0);
	if (!e->trailer_size || e->trailer_size > len)
		return -1;
	c = cur_make((uint8_t *)body + len - e->trailer_size, e->trailer_size, swap);
	if (t & PERF_SAMPLE_TID)
		cur_u32_pair(&c, &s->pid, &s->tid);
	if (t & PERF_SAMPLE_TIME)
		s->time = cur_u64(&c);
	if (t & PERF_SAMPLE_ID)
		s->id = cur_u64(&c);
	if (t & PERF_SAMPLE_STREAM_ID)
		s->stream_id = cur_u64(&c);
	if (t & PERF_SAMPLE_CPU) {
		uint32_t res;
		cur_u32_pair(&c, &s->cpu, &res);
	}
	if (t & PERF_SAMPLE_IDENTIFIER)
		s->id = cur_u64(&c);
	return c.bad ? -1 : 0;
}
