// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * hwtel record: the capture file, Documentation/userspace-api/hwtel.rst
 * "Capture file format". Version 2 is written, versions 1 and 2 are read.
 *
 *   "HWTELREC" u32le version u32le L, L bytes of header text
 *   ("key value" lines: clock, ticks_per_second, period_ns, capacity, pre,
 *   position, shots, command, one "track NAME" per stored track), in
 *   version 2 then u32le CRC32C of everything before it; then records.
 *
 * A version 2 record is u8 type, uvarint payload length, the payload,
 * u32le CRC32C of the type, length and payload. The payload holds the
 * fields of rec.h's enum rec_rtype; a reader skips a record of a type it
 * does not know and the bytes of a known record after the fields it
 * knows (room for later additions). A version 1 record is the type byte
 * and its fields, with an f32 per track in a sample instead of an f64.
 *
 * A sync precedes the first sample of every shot and every 1000th sample
 * after it; the time of a sample is its sync's time plus the ticks since.
 * Every record is whole or absent from the reader's view: a cut file reads
 * up to its last whole record, a version 2 file up to the first record
 * whose checksum fails, and only a file with its 'Z' record is complete.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "rec.h"

struct rec_writer {
	FILE *f;
	unsigned int ntracks;
	uint64_t last_t;
	unsigned int since_sync;
	bool need_sync;
	bool fixed_clock;
	int64_t real_minus_mono;
	unsigned int shots;
	uint64_t samples;
	int err;
	unsigned char *buf;
	/* the file ring (version 3): slots after the header, mapped shared */
	unsigned char *map;
	size_t map_len, ring_off, slot_bytes;
	unsigned int ring_slots;
	uint64_t ring_seq;	/* samples put in the ring so far */
	unsigned int ring_events;	/* event summaries per slot */
};

size_t rec_put_uvarint(unsigned char *p, uint64_t v)
{
	size_t n = 0;

	do {
		unsigned char b = v & 0x7f;

		v >>= 7;
		p[n++] = b | (v ? 0x80 : 0);
	} while (v);
	return n;
}

size_t rec_get_uvarint(const unsigned char *p, size_t len, uint64_t *v)
{
	uint64_t r = 0;
	size_t i;

	for (i = 0; i < len && i < 10; i++) {
		r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			if (i == 9 && p[i] > 1)
				return 0;
			*v = r;
			return i + 1;
		}
	}
	return 0;
}

/*
 * CRC32C, reflected polynomial 0x82F63B78, four bits at a time: entry i is
 * the remainder of the nibble i shifted through four steps.
 */
static const uint32_t crc32c_nib[16] = {
	0x00000000, 0x105ec76f, 0x20bd8ede, 0x30e349b1, 0x417b1dbc, 0x5125dad3,
	0x61c69362, 0x7198540d, 0x82f63b78, 0x92a8fc17, 0xa24bb5a6, 0xb21572c9,
	0xc38d26c4, 0xd3d3e1ab, 0xe330a81a, 0xf36e6f75,
};

uint32_t rec_crc32c(uint32_t crc, const void *p, size_t n)
{
	const unsigned char *b = p;

	crc = ~crc;
	while (n--) {
		crc ^= *b++;
		crc = (crc >> 4) ^ crc32c_nib[crc & 15];
		crc = (crc >> 4) ^ crc32c_nib[crc & 15];
	}
	return ~crc;
}

static size_t put_u32(unsigned char *p, uint32_t v)
{
	unsigned int i;

	for (i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
	return 4;
}

static uint32_t get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static size_t put_u64(unsigned char *p, uint64_t v)
{
	unsigned int i;

	for (i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
	return 8;
}

static uint64_t get_u64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static int wr(struct rec_writer *w, const void *p, size_t n)
{
	if (w->err)
		return w->err;
	if (fwrite(p, 1, n, w->f) != n)
		w->err = errno ? -errno : -EIO;
	return w->err;
}

/* one version 2 record: @p1 and @p2 are its payload, one after the other */
static int w_rec(struct rec_writer *w, unsigned char type, const void *p1, size_t n1,
		 const void *p2, size_t n2)
{
	unsigned char head[11], tail[4];
	size_t h = 0;
	uint32_t crc;

	head[h++] = type;
	h += rec_put_uvarint(head + h, n1 + n2);
	crc = rec_crc32c(0, head, h);
	crc = rec_crc32c(crc, p1, n1);
	if (n2)
		crc = rec_crc32c(crc, p2, n2);
	put_u32(tail, crc);
	wr(w, head, h);
	wr(w, p1, n1);
	if (n2)
		wr(w, p2, n2);
	return wr(w, tail, sizeof(tail));
}

static int wflush(struct rec_writer *w)
{
	if (!w->err && fflush(w->f))
		w->err = errno ? -errno : -EIO;
	return w->err;
}

/* the bytes of a slot before its CRC */
static size_t slot_body(unsigned int ntracks, unsigned int nevents)
{
	return 64 + 8 * (size_t)ntracks + 16 * (size_t)nevents;
}

size_t rec_slot_bytes(unsigned int ntracks, unsigned int nevents)
{
	/* 8 u64 fields, an f64 per track, two u64 per event, a u32 CRC32C,
	 * padded to 8 bytes
	 */
	return (slot_body(ntracks, nevents) + 4 + 7) & ~(size_t)7;
}

/*
 * The file ring: @slots slots of @sb bytes at @off, right after the header.
 * Its blocks are allocated now (a store into the mapping cannot then fail
 * for want of space, which would be a SIGBUS), then it is mapped from the
 * start of the file (an offset of 0 is page aligned on every system) and
 * the records go after it.
 */
static int map_ring(struct rec_writer *w, int fd, size_t off, unsigned int slots, size_t sb)
{
	size_t len;
	void *p;
	int ret;

	if (slots > (SIZE_MAX - off) / sb)
		return -EFBIG;
	len = (size_t)slots * sb;
	ret = posix_fallocate(fd, (off_t)off, (off_t)len);
	if (ret)
		return -ret;
	p = mmap(NULL, off + len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	if (fseeko(w->f, (off_t)(off + len), SEEK_SET)) {
		munmap(p, off + len);
		return -errno;
	}
	w->map = p;
	w->map_len = off + len;
	w->ring_off = off;
	w->ring_slots = slots;
	w->slot_bytes = sb;
	return 0;
}

int rec_writer_open(int fd, const struct rec_header *h, struct rec_writer **out)
{
	struct hwtel_numeric num;
	struct rec_writer *w;
	char *text = NULL;
	size_t tlen = 0;
	unsigned char hd[16];
	FILE *m;
	unsigned int i;
	int ret;

	/* @fd is ours from here: closed on every failure */
	if (h->ring_slots && h->nring_events > REC_MAX_EVENTS) {
		close(fd);
		return -EINVAL;
	}
	for (i = 0; h->ring_slots && i < h->nring_events; i++)
		if (h->ring_event_track[i] >= h->ntracks) {
			close(fd);
			return -EINVAL;
		}
	w = calloc(1, sizeof(*w));
	if (!w) {
		close(fd);
		return -ENOMEM;
	}
	w->ntracks = h->ntracks;
	w->ring_events = h->ring_slots ? h->nring_events : 0;
	w->buf = malloc(rec_slot_bytes(h->ntracks, w->ring_events));
	w->f = fdopen(fd, "wb");
	if (!w->f || !w->buf) {
		if (w->f)
			fclose(w->f);
		else
			close(fd);
		free(w->buf);
		free(w);
		return -ENOMEM;
	}
	m = open_memstream(&text, &tlen);
	if (!m) {
		rec_writer_close(w, false);
		return -ENOMEM;
	}
	hwtel_numeric_c(&num);
	fprintf(m, "clock %s\nticks_per_second 1000000000\nperiod_ns %llu\ncapacity %u\npre %u\nposition %.6g\nshots %u\ncommand %s\n",
		h->clock[0] ? h->clock : "ns", (unsigned long long)h->period_ns, h->capacity,
		h->pre, h->position, h->shots, h->command);
	hwtel_numeric_restore(&num);
	if (h->ring_slots)
		fprintf(m, "ring_slots %u\nslot_bytes %zu\n", h->ring_slots,
			rec_slot_bytes(h->ntracks, w->ring_events));
	for (i = 0; i < w->ring_events; i++)
		fprintf(m, "ring_event_track %u\n", h->ring_event_track[i]);
	for (i = 0; i < h->ntracks; i++)
		fprintf(m, "track %s\n", h->track[i]);
	fclose(m);
	memcpy(hd, REC_MAGIC, 8);
	for (i = 0; i < 4; i++) {
		hd[8 + i] = (unsigned char)((h->ring_slots ? REC_VERSION_RING : REC_VERSION) >> (8 * i));
		hd[12 + i] = (unsigned char)(tlen >> (8 * i));
	}
	wr(w, hd, sizeof(hd));
	wr(w, text, tlen);
	put_u32(hd, rec_crc32c(rec_crc32c(0, hd, 16), text, tlen));
	wr(w, hd, 4);
	free(text);
	ret = wflush(w);
	if (!ret && h->ring_slots)
		ret = map_ring(w, fd, 16 + tlen + 4, h->ring_slots,
			       rec_slot_bytes(h->ntracks, w->ring_events));
	if (ret) {
		rec_writer_close(w, false);
		return ret;
	}
	w->need_sync = true;
	*out = w;
	return 0;
}

void rec_writer_set_clock(struct rec_writer *w, int64_t real_minus_mono_ns)
{
	w->fixed_clock = true;
	w->real_minus_mono = real_minus_mono_ns;
}

static int64_t clock_offset(struct rec_writer *w)
{
	struct timespec a, b;

	if (w->fixed_clock)
		return w->real_minus_mono;
	clock_gettime(CLOCK_MONOTONIC, &a);
	clock_gettime(CLOCK_REALTIME, &b);
	return ((int64_t)b.tv_sec - (int64_t)a.tv_sec) * 1000000000ll +
	       ((int64_t)b.tv_nsec - (int64_t)a.tv_nsec);
}

static int w_sync(struct rec_writer *w, uint64_t t)
{
	unsigned char b[16];

	put_u64(b, t);
	put_u64(b + 8, (uint64_t)((int64_t)t + clock_offset(w)));
	w->last_t = t;
	w->since_sync = 0;
	w->need_sync = false;
	w_rec(w, REC_R_SYNC, b, sizeof(b), NULL, 0);
	return wflush(w);
}

static int w_shot_begin(void *ctx, unsigned int shot, enum rec_cause cause,
			unsigned int pre, uint64_t trig_t)
{
	struct rec_writer *w = ctx;
	unsigned char b[40];
	size_t n = 0;

	n += rec_put_uvarint(b + n, shot);
	b[n++] = (unsigned char)cause;
	n += rec_put_uvarint(b + n, pre);
	n += put_u64(b + n, trig_t);
	w->need_sync = true;
	w->shots++;
	return w_rec(w, REC_R_SHOT, b, n, NULL, 0);
}

static int w_sample(void *ctx, uint64_t t, const double *vals)
{
	struct rec_writer *w = ctx;
	unsigned char *b = w->buf;
	size_t n = 0;
	unsigned int i;
	int ret;

	if (w->need_sync || w->since_sync >= REC_SYNC_EVERY || t < w->last_t) {
		ret = w_sync(w, t);
		if (ret)
			return ret;
	}
	n += rec_put_uvarint(b + n, t - w->last_t);
	for (i = 0; i < w->ntracks; i++) {
		uint64_t u;

		memcpy(&u, &vals[i], 8);
		n += put_u64(b + n, u);
	}
	w->last_t = t;
	w->since_sync++;
	w->samples++;
	return w_rec(w, REC_R_SAMPLE, b, n, NULL, 0);
}

static int w_shot_end(void *ctx, unsigned int shot, unsigned int nsamples)
{
	struct rec_writer *w = ctx;
	unsigned char b[24];
	size_t n = 0;

	n += rec_put_uvarint(b + n, shot);
	n += rec_put_uvarint(b + n, nsamples);
	w_rec(w, REC_R_SHOT_END, b, n, NULL, 0);
	return wflush(w);
}

static int w_note(void *ctx, uint64_t t, const char *text)
{
	struct rec_writer *w = ctx;
	unsigned char b[32];
	size_t n = 0, len = strlen(text);

	n += put_u64(b + n, t);
	n += rec_put_uvarint(b + n, len);
	return w_rec(w, REC_R_NOTE, b, n, text, len);
}

static int w_period(void *ctx, uint64_t period)
{
	struct rec_writer *w = ctx;
	unsigned char b[8];

	put_u64(b, period);
	return w_rec(w, REC_R_PERIOD, b, sizeof(b), NULL, 0);
}

/* a 'G' record: the track (an event's gaps) follows when @has_track */
static int put_gap(struct rec_writer *w, uint64_t t, enum rec_gap_kind kind, uint64_t count,
		   bool has_track, unsigned int track)
{
	unsigned char b[32];	/* 8 + 1 + two uvarints of at most 10 */
	size_t n = 0;

	n += put_u64(b + n, t);
	b[n++] = (unsigned char)kind;
	n += rec_put_uvarint(b + n, count);
	if (has_track)
		n += rec_put_uvarint(b + n, track);
	return w_rec(w, REC_R_GAP, b, n, NULL, 0);
}

static int w_gap(void *ctx, uint64_t t, enum rec_gap_kind kind, uint64_t count)
{
	return put_gap(ctx, t, kind, count, false, 0);
}

static int w_event_gap(void *ctx, uint64_t t, enum rec_gap_kind kind, unsigned int track,
		       uint64_t count)
{
	return put_gap(ctx, t, kind, count, true, track);
}

static int w_event(void *ctx, uint64_t t, unsigned int track, uint64_t count)
{
	struct rec_writer *w = ctx;
	unsigned char b[28];
	size_t n = 0;

	n += put_u64(b + n, t);
	n += rec_put_uvarint(b + n, track);
	n += rec_put_uvarint(b + n, count);
	return w_rec(w, REC_R_EVENT, b, n, NULL, 0);
}

/*
 * One armed sample into the next slot of the file ring, in place: the
 * sample number (from 1), its times, period and gaps, the values, the first
 * time and count of each event (what its 'V' record would carry), then a
 * CRC32C of all these. A reader takes a slot only if its CRC holds, so the
 * stores need no order: a writer killed inside a slot leaves that slot
 * failing its check (a chance of 2^-32 that it passes), never a mix read
 * as a sample. The slot overwritten is the oldest; with pre + 1 slots it is
 * one the ring no longer keeps.
 */
static int w_ring(void *ctx, uint64_t t, uint64_t period, const struct rec_gaps *g,
		  const struct rec_evsum *ev, unsigned int nev, const double *vals)
{
	struct rec_writer *w = ctx;
	unsigned char *b = w->buf;
	size_t n = 0;
	unsigned int i;

	if (!w->map)
		return 0;
	w->ring_seq++;
	n += put_u64(b + n, w->ring_seq);
	n += put_u64(b + n, t);
	n += put_u64(b + n, (uint64_t)((int64_t)t + clock_offset(w)));
	n += put_u64(b + n, period);
	n += put_u64(b + n, g->late_t);
	n += put_u64(b + n, g->late);
	n += put_u64(b + n, g->stale_t);
	n += put_u64(b + n, g->stale);
	for (i = 0; i < w->ntracks; i++) {
		uint64_t u;

		memcpy(&u, &vals[i], 8);
		n += put_u64(b + n, u);
	}
	/* an event the engine did not pass had no occurrence */
	for (i = 0; i < w->ring_events; i++) {
		n += put_u64(b + n, i < nev && ev[i].n ? ev[i].first : 0);
		n += put_u64(b + n, i < nev ? ev[i].n : 0);
	}
	n += put_u32(b + n, rec_crc32c(0, b, n));
	memcpy(w->map + w->ring_off + (size_t)(w->ring_seq % w->ring_slots) * w->slot_bytes, b, n);
	return 0;
}

int rec_writer_flush(struct rec_writer *w)
{
	return wflush(w);
}

int rec_writer_sync(struct rec_writer *w)
{
	if (wflush(w))
		return w->err;
	if (w->map && msync(w->map, w->map_len, MS_SYNC))
		w->err = -errno;
	else if (fdatasync(fileno(w->f)) && errno != EINVAL && errno != EROFS)
		w->err = -errno;
	return w->err;
}

void rec_writer_sink(struct rec_writer *w, struct rec_sink *s)
{
	s->ring = w_ring;
	s->event = w_event;
	s->gap = w_gap;
	s->event_gap = w_event_gap;
	s->ctx = w;
	s->period = w_period;
	s->shot_begin = w_shot_begin;
	s->sample = w_sample;
	s->shot_end = w_shot_end;
	s->note = w_note;
}

int rec_writer_close(struct rec_writer *w, bool complete)
{
	int ret;

	if (!w)
		return 0;
	if (complete) {
		unsigned char b[24];
		size_t n = 0;

		n += rec_put_uvarint(b + n, w->shots);
		n += put_u64(b + n, w->samples);
		w_rec(w, REC_R_END, b, n, NULL, 0);
	}
	wflush(w);
	if (!w->err && fsync(fileno(w->f)) && errno != EINVAL && errno != EROFS)
		w->err = -errno;
	ret = w->err;
	if (w->map)
		munmap(w->map, w->map_len);
	if (fclose(w->f) && !ret)
		ret = -EIO;
	free(w->buf);
	free(w);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Reader                                                             */

static void rerr(char *err, size_t size, const char *msg)
{
	if (err && size)
		snprintf(err, size, "%s", msg);
}

static int parse_header(struct rec_capture *c, char *text, char *err, size_t errsize)
{
	char *line, *save = NULL;
	unsigned int nt = 0, cap = 0;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *v = strchr(line, ' ');

		if (!v)
			v = line + strlen(line);
		else
			*v++ = '\0';
		if (!strcmp(line, "clock")) {
			snprintf(c->h.clock, sizeof(c->h.clock), "%s", v);
		} else if (!strcmp(line, "period_ns")) {
			c->h.period_ns = strtoull(v, NULL, 10);
		} else if (!strcmp(line, "capacity")) {
			c->h.capacity = (unsigned int)strtoul(v, NULL, 10);
		} else if (!strcmp(line, "pre")) {
			c->h.pre = (unsigned int)strtoul(v, NULL, 10);
		} else if (!strcmp(line, "position")) {
			c->h.position = hwtel_strtod(v, NULL);
		} else if (!strcmp(line, "shots")) {
			c->h.shots = (unsigned int)strtoul(v, NULL, 10);
		} else if (!strcmp(line, "ring_slots")) {
			c->h.ring_slots = (unsigned int)strtoul(v, NULL, 10);
		} else if (!strcmp(line, "slot_bytes")) {
			c->h.slot_bytes = (unsigned int)strtoul(v, NULL, 10);
		} else if (!strcmp(line, "ring_event_track")) {
			/* more than REC_MAX_EVENTS: refused with the ring's checks */
			if (c->h.nring_events < REC_MAX_EVENTS)
				c->h.ring_event_track[c->h.nring_events] =
					(unsigned int)strtoul(v, NULL, 10);
			if (c->h.nring_events <= REC_MAX_EVENTS)
				c->h.nring_events++;
		} else if (!strcmp(line, "command")) {
			snprintf(c->h.command, sizeof(c->h.command), "%s", v);
		} else if (!strcmp(line, "track")) {
			if (nt == cap) {
				char (*t)[REC_NAME_MAX];

				cap = cap ? 2 * cap : 16;
				t = realloc(c->h.track, cap * sizeof(*t));
				if (!t)
					return -ENOMEM;
				c->h.track = t;
			}
			snprintf(c->h.track[nt++], REC_NAME_MAX, "%s", v);
		}
		/* unknown keys: a later minor addition, ignored */
	}
	c->h.ntracks = nt;
	if (strcmp(c->h.clock, "ns")) {
		rerr(err, errsize, "unsupported tick clock in the header (this hwtel knows 'ns')");
		return -EINVAL;
	}
	return 0;
}

static void *grow(void *p, unsigned int n, unsigned int *cap, size_t size)
{
	void *q;

	if (n < *cap)
		return p;
	*cap = *cap ? 2 * *cap : 64;
	q = realloc(p, (size_t)*cap * size);
	return q;
}

struct reader {
	struct rec_capture *c;
	unsigned int scap, shcap, ncap, gcap, ecap;
	uint64_t missed, stale;	/* gaps before the next sample */
	uint64_t base, real_off;
	uint64_t period;	/* of the samples that follow */
	bool have_sync;
	char *err;
	size_t errsize;
};

/*
 * A gap or an event before the next sample (the c->nsamples-th), read from
 * a 'G' or 'V' record or from a ring slot: the same list either way.
 */
/* Add @count (modulo 2^64: 0 - n takes n away) to the total of @kind. */
static void gap_total(struct rec_capture *c, enum rec_gap_kind kind, uint64_t count)
{
	if (kind == REC_GAP_LATE)
		c->missed_periods += count;
	else if (kind == REC_GAP_STALE)
		c->stale_reads += count;
	else if (kind == REC_GAP_LOST)
		c->lost_occurrences += count;
	else
		c->throttles += count;
}

static int add_gap(struct reader *r, uint64_t t, enum rec_gap_kind kind, uint64_t count,
		   unsigned int track)
{
	struct rec_capture *c = r->c;
	struct rec_gap *g = grow(c->gaps, c->ngaps, &r->gcap, sizeof(*c->gaps));

	if (!g)
		return -ENOMEM;
	c->gaps = g;
	c->gaps[c->ngaps++] = (struct rec_gap){ .mono_ns = t, .kind = kind, .count = count,
						.sample = c->nsamples, .track = track };
	gap_total(c, kind, count);
	return 0;
}

static int add_event(struct reader *r, uint64_t t, unsigned int track, uint64_t count)
{
	struct rec_capture *c = r->c;
	struct rec_event *ev = grow(c->events, c->nevents, &r->ecap, sizeof(*c->events));

	if (!ev)
		return -ENOMEM;
	c->events = ev;
	c->events[c->nevents++] = (struct rec_event){ .mono_ns = t, .track = track,
						      .count = count, .sample = c->nsamples };
	return 0;
}

/*
 * A gap or event record belongs to the sample record after it. Those after
 * the last sample record (the file ends between them and their sample: a
 * writer killed or a file cut there) go with the sample the records lack:
 * dropped, as the ring drops a sample's gaps with it. If that sample is
 * recovered from the file ring, its slot brings its late and stale gaps
 * and its events, so none is read twice, nor given to the next sample
 * read. A slot has no lost or throttled gaps (an event's): those of a
 * sample the records lack are not read, recovered or not.
 */
static void drop_unfollowed(struct reader *r)
{
	struct rec_capture *c = r->c;

	while (c->ngaps && c->gaps[c->ngaps - 1].sample == c->nsamples) {
		const struct rec_gap *g = &c->gaps[--c->ngaps];

		gap_total(c, g->kind, 0 - g->count);
	}
	while (c->nevents && c->events[c->nevents - 1].sample == c->nsamples)
		c->nevents--;
}

#define DEC_UNKNOWN	(-1000)	/* a record type this reader does not know */
#define DEC_CORRUPT	(-1001)	/* fields that make no sense (message set) */

/*
 * The fields of one record of @type at @p (after the type byte; in version
 * 2 its payload), @len bytes. Returns the bytes they take, 0 when @len is
 * too short for them, DEC_UNKNOWN, DEC_CORRUPT or -ENOMEM.
 */
static long decode(struct reader *r, unsigned char type, const unsigned char *p, size_t len)
{
	struct rec_capture *c = r->c;
	size_t n = 0, k, vsize = c->version == 1 ? 4 : 8;
	uint64_t a, b;

	switch (type) {
	case REC_R_SYNC:
		if (len < 16)
			return 0;
		r->base = get_u64(p);
		r->real_off = get_u64(p + 8) - r->base;
		r->have_sync = true;
		c->nsyncs++;
		return 16;
	case REC_R_SAMPLE: {
		struct rec_sample *s;
		struct rec_shot *sh;
		unsigned int i, nt = c->h.ntracks;
		double *v;

		k = rec_get_uvarint(p, len, &a);
		if (!k || len - k < vsize * nt)
			return 0;
		if (!r->have_sync || !c->nshots) {
			rerr(r->err, r->errsize, "corrupt capture: a sample before its sync or shot record");
			return DEC_CORRUPT;
		}
		if (c->nsamples == r->scap) {
			unsigned int cap = r->scap;

			s = grow(c->samples, c->nsamples, &cap, sizeof(*c->samples));
			if (!s)
				return -ENOMEM;
			c->samples = s;
			v = realloc(c->vals, (size_t)cap * (nt ? nt : 1) * sizeof(*v));
			if (!v)
				return -ENOMEM;
			c->vals = v;
			r->scap = cap;
		}
		r->base += a;
		s = &c->samples[c->nsamples];
		s->mono_ns = r->base;
		s->real_ns = r->base + r->real_off;
		sh = &c->shots[c->nshots - 1];
		s->shot = sh->number;
		s->index = sh->nsamples++;
		s->period_ns = r->period;
		s->missed = r->missed;
		s->stale = r->stale;
		r->missed = r->stale = 0;
		s->vals = NULL;	/* set at the end: c->vals may move */
		v = &c->vals[(size_t)c->nsamples * nt];
		for (i = 0; i < nt; i++) {
			const unsigned char *q = p + k + vsize * i;

			if (vsize == 4) {
				uint32_t u = get_u32(q);
				float f;

				memcpy(&f, &u, 4);
				v[i] = f;
			} else {
				uint64_t u = get_u64(q);

				memcpy(&v[i], &u, 8);
			}
		}
		c->nsamples++;
		return (long)(k + vsize * nt);
	}
	case REC_R_SHOT: {
		struct rec_shot *sh;
		size_t k2;

		k = rec_get_uvarint(p, len, &a);
		if (!k || len < k + 1)
			return 0;
		n = k + 1;
		k2 = rec_get_uvarint(p + n, len - n, &b);
		if (!k2 || len - n - k2 < 8)
			return 0;
		sh = grow(c->shots, c->nshots, &r->shcap, sizeof(*c->shots));
		if (!sh)
			return -ENOMEM;
		c->shots = sh;
		sh = &c->shots[c->nshots];
		memset(sh, 0, sizeof(*sh));
		sh->number = (unsigned int)a;
		sh->cause = (enum rec_cause)p[k];
		sh->pre = (unsigned int)b;
		n += k2;
		sh->trig_mono_ns = get_u64(p + n);
		sh->first = c->nsamples;
		c->nshots++;
		r->have_sync = false;
		return (long)(n + 8);
	}
	case REC_R_SHOT_END:
		k = rec_get_uvarint(p, len, &a);
		if (!k)
			return 0;
		n = rec_get_uvarint(p + k, len - k, &b);
		if (!n)
			return 0;
		if (c->nshots && c->shots[c->nshots - 1].number == a)
			c->shots[c->nshots - 1].ended = true;
		return (long)(k + n);
	case REC_R_NOTE: {
		struct rec_note *nt;

		if (len < 8)
			return 0;
		a = get_u64(p);
		k = rec_get_uvarint(p + 8, len - 8, &b);
		if (!k || len - 8 - k < b)
			return 0;
		nt = grow(c->notes, c->nnotes, &r->ncap, sizeof(*c->notes));
		if (!nt)
			return -ENOMEM;
		c->notes = nt;
		nt = &c->notes[c->nnotes++];
		nt->mono_ns = a;
		snprintf(nt->text, sizeof(nt->text), "%.*s",
			 (int)(b < sizeof(nt->text) ? b : sizeof(nt->text) - 1), (const char *)p + 8 + k);
		return (long)(8 + k + b);
	}
	case REC_R_PERIOD:
		if (c->version == 1)
			break;
		if (len < 8)
			return 0;
		r->period = get_u64(p);
		return 8;
	case REC_R_GAP:
		if (c->version == 1)
			break;
		if (len < 9)
			return 0;
		k = rec_get_uvarint(p + 9, len - 9, &a);
		if (!k)
			return 0;
		/* a kind this reader does not know: skipped like a record */
		if (p[8] < REC_GAP_LATE || p[8] > REC_GAP_THROTTLED) {
			c->nskipped++;
			return (long)(9 + k);
		}
		/* an event's gap: its track follows */
		n = 0;
		if (p[8] == REC_GAP_LOST || p[8] == REC_GAP_THROTTLED) {
			n = rec_get_uvarint(p + 9 + k, len - 9 - k, &b);
			if (!n)
				return 0;
			if (b >= c->h.ntracks) {
				rerr(r->err, r->errsize, "corrupt capture: a gap record names no track");
				return DEC_CORRUPT;
			}
		}
		if (add_gap(r, get_u64(p), (enum rec_gap_kind)p[8], a, n ? (unsigned int)b : 0))
			return -ENOMEM;
		if (p[8] == REC_GAP_LATE)
			r->missed += a;
		else if (p[8] == REC_GAP_STALE)
			r->stale += a;
		return (long)(9 + k + n);
	case REC_R_EVENT:
		if (c->version == 1)
			break;
		if (len < 8)
			return 0;
		k = rec_get_uvarint(p + 8, len - 8, &a);
		if (!k)
			return 0;
		n = rec_get_uvarint(p + 8 + k, len - 8 - k, &b);
		if (!n)
			return 0;
		if (a >= c->h.ntracks) {
			rerr(r->err, r->errsize, "corrupt capture: an event record names no track");
			return DEC_CORRUPT;
		}
		if (add_event(r, get_u64(p), (unsigned int)a, b))
			return -ENOMEM;
		return (long)(8 + k + n);
	case REC_R_END:
		k = rec_get_uvarint(p, len, &a);
		if (!k || len - k < 8)
			return 0;
		c->complete = true;
		return (long)(k + 8);
	}
	return DEC_UNKNOWN;
}

/* Version 1: a type byte and its fields. Returns the record's size, 0 at
 * the end of what is readable (a cut or an error, @err says which).
 */
static long next_v1(struct reader *r, const unsigned char *p, size_t rem, size_t off)
{
	long n = decode(r, p[0], p + 1, rem - 1);

	if (n > 0)
		return n + 1;
	if (n == 0 && r->err && r->errsize)
		snprintf(r->err, r->errsize, "cut short inside the record at byte %zu", off);
	if (n == DEC_UNKNOWN)
		rerr(r->err, r->errsize, "corrupt capture: unknown record type");
	return n == -ENOMEM ? n : 0;
}

/* Version 2: type, uvarint length, payload, CRC32C. As next_v1(). */
static long next_v2(struct reader *r, const unsigned char *p, size_t rem, size_t off)
{
	uint64_t plen;
	size_t k = rec_get_uvarint(p + 1, rem - 1, &plen), size;
	long n;

	if (!k && rem - 1 >= 10) {
		if (r->err && r->errsize)
			snprintf(r->err, r->errsize,
				 "corrupt capture: a bad length in the record at byte %zu", off);
		return 0;
	}
	if (!k) {
		if (r->err && r->errsize)
			snprintf(r->err, r->errsize,
				 "cut short inside the record at byte %zu (before the end of its length)",
				 off);
		return 0;
	}
	if (plen > rem || 1 + k + plen + 4 > rem) {
		if (r->err && r->errsize)
			snprintf(r->err, r->errsize,
				 "cut short inside the record at byte %zu (%zu of its %llu bytes)", off,
				 rem, (unsigned long long)(1 + k + plen + 4));
		return 0;
	}
	size = 1 + k + (size_t)plen;
	if (rec_crc32c(0, p, size) != get_u32(p + size)) {
		if (r->err && r->errsize)
			snprintf(r->err, r->errsize,
				 "corrupt capture: checksum mismatch in the record at byte %zu", off);
		return 0;
	}
	n = decode(r, p[0], p + 1 + k, (size_t)plen);
	if (n == DEC_UNKNOWN) {
		r->c->nskipped++;
	} else if (n == 0) {
		if (r->err && r->errsize)
			snprintf(r->err, r->errsize,
				 "corrupt capture: the record at byte %zu is too short for its type", off);
		return 0;
	} else if (n < 0) {
		return n == -ENOMEM ? n : 0;
	}
	return (long)(size + 4);
}

/* a valid slot of the file ring: its sample number and where it is */
struct slot {
	uint64_t seq;
	const unsigned char *p;
};

static int slot_cmp(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * The file ring of a capture whose end record is missing: the slots whose
 * CRC holds, by sample number; of those later than the last sample of the
 * records (the rest were flushed into them at a trigger), the newest pre.
 * They are the pre-trigger samples of the last shot if it is short of its
 * own (the writer died while flushing the ring into the records: they
 * precede its trigger), else an untriggered shot of their own.
 */
static int read_ring(struct reader *r, const unsigned char *ring)
{
	struct rec_capture *c = r->c;
	unsigned int nt = c->h.ntracks, ne = c->h.nring_events, i, k, n = 0, first;
	size_t body = slot_body(nt, ne);
	uint64_t last = c->nsamples ? c->samples[c->nsamples - 1].mono_ns : 0;
	struct rec_shot *sh = c->nshots ? &c->shots[c->nshots - 1] : NULL;
	struct slot *v;
	int ret = 0;

	v = calloc(c->h.ring_slots, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < c->h.ring_slots; i++) {
		const unsigned char *p = ring + (size_t)i * c->h.slot_bytes;

		if (rec_crc32c(0, p, body) != get_u32(p + body) || !get_u64(p)) {
			for (k = 0; k < c->h.slot_bytes && !p[k]; k++)
				;
			if (k < c->h.slot_bytes)	/* written, not whole */
				c->ring_torn++;
			continue;
		}
		c->ring_valid++;
		if (!c->nsamples || get_u64(p + 8) > last)
			v[n++] = (struct slot){ get_u64(p), p };
	}
	qsort(v, n, sizeof(*v), slot_cmp);
	first = n > c->h.pre ? n - c->h.pre : 0;
	/* the last shot still short of its pre-trigger samples takes them */
	if (first < n && !(sh && !sh->ended &&
			   (sh->cause == REC_CAUSE_NONE ? sh->nsamples < sh->pre :
			    sh->nsamples <= sh->pre && get_u64(v[n - 1].p + 8) < sh->trig_mono_ns))) {
		sh = grow(c->shots, c->nshots, &r->shcap, sizeof(*c->shots));
		if (!sh) {
			free(v);
			return -ENOMEM;
		}
		c->shots = sh;
		sh = &c->shots[c->nshots];
		memset(sh, 0, sizeof(*sh));
		sh->number = c->nshots ? c->shots[c->nshots - 1].number + 1 : 0;
		sh->cause = REC_CAUSE_NONE;
		sh->pre = n - first;
		sh->first = c->nsamples;
		c->nshots++;
	}
	for (i = first; i < n && !ret; i++) {
		const unsigned char *p = v[i].p;
		struct rec_sample *s;
		double *vv;

		if (c->nsamples == r->scap) {
			unsigned int cap = r->scap;

			s = grow(c->samples, c->nsamples, &cap, sizeof(*c->samples));
			if (!s) {
				ret = -ENOMEM;
				break;
			}
			c->samples = s;
			vv = realloc(c->vals, (size_t)cap * (nt ? nt : 1) * sizeof(*vv));
			if (!vv) {
				ret = -ENOMEM;
				break;
			}
			c->vals = vv;
			r->scap = cap;
		}
		/* its gaps (late, stale), then its events, as records before it
		 * would be; a count of 0 is none
		 */
		if (get_u64(p + 40))
			ret = add_gap(r, get_u64(p + 32), REC_GAP_LATE, get_u64(p + 40), 0);
		if (!ret && get_u64(p + 56))
			ret = add_gap(r, get_u64(p + 48), REC_GAP_STALE, get_u64(p + 56), 0);
		for (k = 0; k < ne && !ret; k++) {
			const unsigned char *q = p + 64 + 8 * (size_t)nt + 16 * (size_t)k;

			if (get_u64(q + 8))
				ret = add_event(r, get_u64(q), c->h.ring_event_track[k],
						get_u64(q + 8));
		}
		if (ret)
			break;
		s = &c->samples[c->nsamples];
		s->mono_ns = get_u64(p + 8);
		s->real_ns = get_u64(p + 16);
		s->period_ns = get_u64(p + 24);
		s->missed = get_u64(p + 40);
		s->stale = get_u64(p + 56);
		s->shot = sh->number;
		s->index = sh->nsamples++;
		s->vals = NULL;
		vv = &c->vals[(size_t)c->nsamples * nt];
		for (k = 0; k < nt; k++) {
			uint64_t u = get_u64(p + 64 + 8 * (size_t)k);

			memcpy(&vv[k], &u, 8);
		}
		c->nsamples++;
		c->recovered++;
	}
	free(v);
	return ret;
}

int rec_read_mem(const unsigned char *buf, size_t len, struct rec_capture *c,
		 char *err, size_t errsize)
{
	struct reader r = { .c = c, .err = err, .errsize = errsize };
	size_t off, tlen, hend, ring;
	uint32_t ver;
	char *text;
	int ret;

	memset(c, 0, sizeof(*c));
	c->bytes = len;
	if (len < 16 || memcmp(buf, REC_MAGIC, 8)) {
		rerr(err, errsize, "not a hwtel capture (no HWTELREC header)");
		return -EINVAL;
	}
	ver = get_u32(buf + 8);
	tlen = get_u32(buf + 12);
	if (ver < 1 || ver > 3) {
		rerr(err, errsize, "capture file version not supported (this hwtel reads versions 1 to 3)");
		return -EINVAL;
	}
	hend = 16 + (ver >= 2 ? 4 : 0);
	if (len < hend || tlen > len - hend) {
		rerr(err, errsize, "capture file cut inside its header");
		return -EINVAL;
	}
	if (ver >= 2 && rec_crc32c(0, buf, 16 + tlen) != get_u32(buf + 16 + tlen)) {
		rerr(err, errsize, "corrupt capture header (checksum mismatch)");
		return -EINVAL;
	}
	c->version = ver;
	text = malloc(tlen + 1);
	if (!text)
		return -ENOMEM;
	memcpy(text, buf + 16, tlen);
	text[tlen] = '\0';
	ret = parse_header(c, text, err, errsize);
	free(text);
	if (ret) {
		rec_capture_free(c);
		return ret;
	}
	r.period = c->h.period_ns;
	off = hend + tlen;
	ring = off;
	if (ver == 3) {
		/* a slot has at least the fields and CRC; padding is optional */
		const char *bad = NULL;
		unsigned int k;

		if (!c->h.ring_slots || c->h.nring_events > REC_MAX_EVENTS ||
		    c->h.slot_bytes < rec_slot_bytes(c->h.ntracks, c->h.nring_events) - 4)
			bad = "corrupt capture header (bad ring_slots, slot_bytes or ring_event_track)";
		for (k = 0; !bad && k < c->h.nring_events; k++)
			if (c->h.ring_event_track[k] >= c->h.ntracks)
				bad = "corrupt capture header (bad ring_event_track)";
		if (!bad && c->h.ring_slots > (len - off) / c->h.slot_bytes)
			bad = "capture file cut inside its ring";
		if (bad) {
			rerr(err, errsize, bad);
			rec_capture_free(c);
			return -EINVAL;
		}
		off += (size_t)c->h.ring_slots * c->h.slot_bytes;
	}
	c->good_bytes = off;
	while (off < len && !c->complete) {
		long n = ver == 1 ? next_v1(&r, buf + off, len - off, off) :
			 next_v2(&r, buf + off, len - off, off);

		if (n == -ENOMEM) {
			rec_capture_free(c);
			return -ENOMEM;
		}
		if (n <= 0)
			break;
		off += (size_t)n;
		c->good_bytes = off;
	}
	drop_unfollowed(&r);
	if (ver == 3 && !c->complete) {
		ret = read_ring(&r, buf + ring);
		if (ret) {
			rec_capture_free(c);
			return ret;
		}
	}
	{
		unsigned int i;

		for (i = 0; i < c->nsamples; i++)
			c->samples[i].vals = &c->vals[(size_t)i * c->h.ntracks];
	}
	return 0;
}

int rec_read(const char *path, struct rec_capture *c, char *err, size_t errsize)
{
	unsigned char *buf;
	struct stat st;
	size_t got = 0;
	int fd, ret;

	memset(c, 0, sizeof(*c));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		if (err && errsize)
			snprintf(err, errsize, "cannot open %s: %s", path, strerror(errno));
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);

		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	ret = rec_read_mem(buf, got, c, err, errsize);
	free(buf);
	return ret;
}

void rec_capture_free(struct rec_capture *c)
{
	free(c->h.track);
	free(c->samples);
	free(c->shots);
	free(c->notes);
	free(c->gaps);
	free(c->events);
	free(c->vals);
	memset(c, 0, sizeof(*c));
}
