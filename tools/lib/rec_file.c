// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * hwtel record: the capture file (version 1), Documentation/userspace-api/
 * hwtel.rst "Capture file format".
 *
 *   "HWTELREC" u32le version u32le L, L bytes of header text
 *   ("key value" lines: clock, ticks_per_second, period_ns, capacity, pre,
 *   position, shots, command, one "track NAME" per stored track), then
 *   records, each a type byte and its fields:
 *     'S' sync      u64le CLOCK_MONOTONIC ns, u64le CLOCK_REALTIME ns
 *     'D' sample    uvarint ticks since the previous sync or sample,
 *                   f32le per track
 *     'B' shot      uvarint shot, u8 cause, uvarint pre, u64le trigger ns
 *     'E' shot end  uvarint shot, uvarint samples
 *     'N' note      u64le ns, uvarint length, text
 *     'Z' end       uvarint shots, u64le samples
 *
 * A sync precedes the first sample of every shot and every 1000th sample
 * after it; the time of a sample is its sync's time plus the ticks since.
 * Every record is whole or absent from the reader's view: a cut file reads
 * up to its last whole record, and only a file with its 'Z' record is
 * complete.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
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

static int wflush(struct rec_writer *w)
{
	if (!w->err && fflush(w->f))
		w->err = errno ? -errno : -EIO;
	return w->err;
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

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->ntracks = h->ntracks;
	w->buf = malloc(32 + 4 * (size_t)h->ntracks);
	w->f = fdopen(fd, "wb");
	if (!w->f || !w->buf) {
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
	for (i = 0; i < h->ntracks; i++)
		fprintf(m, "track %s\n", h->track[i]);
	fclose(m);
	memcpy(hd, REC_MAGIC, 8);
	for (i = 0; i < 4; i++) {
		hd[8 + i] = (unsigned char)(REC_VERSION >> (8 * i));
		hd[12 + i] = (unsigned char)(tlen >> (8 * i));
	}
	wr(w, hd, sizeof(hd));
	wr(w, text, tlen);
	free(text);
	ret = wflush(w);
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
	unsigned char b[17];

	b[0] = REC_R_SYNC;
	put_u64(b + 1, t);
	put_u64(b + 9, (uint64_t)((int64_t)t + clock_offset(w)));
	w->last_t = t;
	w->since_sync = 0;
	w->need_sync = false;
	wr(w, b, sizeof(b));
	return wflush(w);
}

static int w_shot_begin(void *ctx, unsigned int shot, enum rec_cause cause,
			unsigned int pre, uint64_t trig_t)
{
	struct rec_writer *w = ctx;
	unsigned char b[40];
	size_t n = 0;

	b[n++] = REC_R_SHOT;
	n += rec_put_uvarint(b + n, shot);
	b[n++] = (unsigned char)cause;
	n += rec_put_uvarint(b + n, pre);
	n += put_u64(b + n, trig_t);
	w->need_sync = true;
	w->shots++;
	return wr(w, b, n);
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
	b[n++] = REC_R_SAMPLE;
	n += rec_put_uvarint(b + n, t - w->last_t);
	for (i = 0; i < w->ntracks; i++) {
		float f = (float)vals[i];
		uint32_t u;

		memcpy(&u, &f, 4);
		b[n++] = (unsigned char)u;
		b[n++] = (unsigned char)(u >> 8);
		b[n++] = (unsigned char)(u >> 16);
		b[n++] = (unsigned char)(u >> 24);
	}
	w->last_t = t;
	w->since_sync++;
	w->samples++;
	return wr(w, b, n);
}

static int w_shot_end(void *ctx, unsigned int shot, unsigned int nsamples)
{
	struct rec_writer *w = ctx;
	unsigned char b[24];
	size_t n = 0;

	b[n++] = REC_R_SHOT_END;
	n += rec_put_uvarint(b + n, shot);
	n += rec_put_uvarint(b + n, nsamples);
	wr(w, b, n);
	return wflush(w);
}

static int w_note(void *ctx, uint64_t t, const char *text)
{
	struct rec_writer *w = ctx;
	unsigned char b[32];
	size_t n = 0, len = strlen(text);

	b[n++] = REC_R_NOTE;
	n += put_u64(b + n, t);
	n += rec_put_uvarint(b + n, len);
	wr(w, b, n);
	return wr(w, text, len);
}

void rec_writer_sink(struct rec_writer *w, struct rec_sink *s)
{
	s->ctx = w;
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

		b[n++] = REC_R_END;
		n += rec_put_uvarint(b + n, w->shots);
		n += put_u64(b + n, w->samples);
		wr(w, b, n);
	}
	wflush(w);
	if (!w->err && fsync(fileno(w->f)) && errno != EINVAL && errno != EROFS)
		w->err = -errno;
	ret = w->err;
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
		rerr(err, errsize, "unsupported tick clock in the header (version 1 knows 'ns')");
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

int rec_read_mem(const unsigned char *buf, size_t len, struct rec_capture *c,
		 char *err, size_t errsize)
{
	unsigned int scap = 0, shcap = 0, ncap = 0, vcap = 0;
	uint64_t base = 0, real_off = 0, v;
	bool have_sync = false;
	size_t off, tlen;
	uint32_t ver;
	char *text;
	int ret;

	memset(c, 0, sizeof(*c));
	c->bytes = len;
	if (len < 16 || memcmp(buf, REC_MAGIC, 8)) {
		rerr(err, errsize, "not a hwtel capture (no HWTELREC header)");
		return -EINVAL;
	}
	ver = (uint32_t)buf[8] | (uint32_t)buf[9] << 8 | (uint32_t)buf[10] << 16 |
	      (uint32_t)buf[11] << 24;
	tlen = (size_t)buf[12] | (size_t)buf[13] << 8 | (size_t)buf[14] << 16 |
	       (size_t)buf[15] << 24;
	if (ver != REC_VERSION) {
		rerr(err, errsize, "capture file version not supported (this hwtel reads version 1)");
		return -EINVAL;
	}
	if (tlen > len - 16) {
		rerr(err, errsize, "capture file cut inside its header");
		return -EINVAL;
	}
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
	off = 16 + tlen;
	c->good_bytes = off;
	while (off < len) {
		const unsigned char *p = buf + off;
		size_t rem = len - off, n = 1, k;
		uint64_t a, b;

		switch (p[0]) {
		case REC_R_SYNC:
			if (rem < 17)
				goto cut;
			base = get_u64(p + 1);
			real_off = get_u64(p + 9) - base;
			have_sync = true;
			c->nsyncs++;
			n = 17;
			break;
		case REC_R_SAMPLE: {
			struct rec_sample *s;
			struct rec_shot *sh;
			unsigned int i;
			size_t need;

			k = rec_get_uvarint(p + 1, rem - 1, &v);
			if (!k)
				goto cut;
			n += k;
			need = 4 * (size_t)c->h.ntracks;
			if (rem - n < need)
				goto cut;
			if (!have_sync || !c->nshots) {
				rerr(err, errsize, "corrupt capture: a sample before its sync or shot record");
				goto stop;
			}
			c->samples = grow(c->samples, c->nsamples, &scap, sizeof(*c->samples));
			if (!c->samples)
				goto nomem;
			base += v;
			s = &c->samples[c->nsamples];
			s->mono_ns = base;
			s->real_ns = base + real_off;
			sh = &c->shots[c->nshots - 1];
			s->shot = sh->number;
			s->index = sh->nsamples++;
			s->vals = NULL;
			/* values live in one array, the pointers are set at the end */
			if (c->nsamples + 1 > vcap) {
				float *nv;

				vcap = scap;
				nv = realloc(c->vals, (size_t)vcap * (c->h.ntracks ? c->h.ntracks : 1) *
					     sizeof(float));
				if (!nv)
					goto nomem;
				c->vals = nv;
			}
			for (i = 0; i < c->h.ntracks; i++) {
				const unsigned char *q = p + n + 4 * i;
				uint32_t u = (uint32_t)q[0] | (uint32_t)q[1] << 8 |
					     (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
				float f;

				memcpy(&f, &u, 4);
				c->vals[(size_t)c->nsamples * c->h.ntracks + i] = f;
			}
			n += need;
			c->nsamples++;
			break;
		}
		case REC_R_SHOT: {
			struct rec_shot *sh;
			size_t k2;

			k = rec_get_uvarint(p + 1, rem - 1, &a);
			if (!k || rem < 1 + k + 1)
				goto cut;
			n += k + 1;
			k2 = rec_get_uvarint(p + n, rem - n, &b);
			if (!k2 || rem - n - k2 < 8)
				goto cut;
			c->shots = grow(c->shots, c->nshots, &shcap, sizeof(*c->shots));
			if (!c->shots)
				goto nomem;
			sh = &c->shots[c->nshots];
			memset(sh, 0, sizeof(*sh));
			sh->number = (unsigned int)a;
			sh->cause = (enum rec_cause)p[1 + k];
			sh->pre = (unsigned int)b;
			n += k2;
			sh->trig_mono_ns = get_u64(p + n);
			n += 8;
			sh->first = c->nsamples;
			c->nshots++;
			have_sync = false;
			break;
		}
		case REC_R_SHOT_END:
			k = rec_get_uvarint(p + 1, rem - 1, &a);
			if (!k)
				goto cut;
			n += k;
			k = rec_get_uvarint(p + n, rem - n, &b);
			if (!k)
				goto cut;
			n += k;
			if (c->nshots && c->shots[c->nshots - 1].number == a)
				c->shots[c->nshots - 1].ended = true;
			break;
		case REC_R_NOTE: {
			struct rec_note *nt;

			if (rem < 9)
				goto cut;
			a = get_u64(p + 1);
			n = 9;
			k = rec_get_uvarint(p + n, rem - n, &b);
			if (!k || rem - n - k < b)
				goto cut;
			n += k;
			c->notes = grow(c->notes, c->nnotes, &ncap, sizeof(*c->notes));
			if (!c->notes)
				goto nomem;
			nt = &c->notes[c->nnotes++];
			nt->mono_ns = a;
			snprintf(nt->text, sizeof(nt->text), "%.*s",
				 (int)(b < sizeof(nt->text) ? b : sizeof(nt->text) - 1), (const char *)p + n);
			n += b;
			break;
		}
		case REC_R_END:
			k = rec_get_uvarint(p + 1, rem - 1, &a);
			if (!k || rem - 1 - k < 8)
				goto cut;
			n += k + 8;
			c->complete = true;
			break;
		default:
			rerr(err, errsize, "corrupt capture: unknown record type");
			goto stop;
		}
		off += n;
		c->good_bytes = off;
		if (c->complete)
			break;
	}
cut:
stop:
	{
		unsigned int i;

		for (i = 0; i < c->nsamples; i++)
			c->samples[i].vals = &c->vals[(size_t)i * c->h.ntracks];
	}
	return 0;
nomem:
	rec_capture_free(c);
	return -ENOMEM;
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
	free(c->vals);
	memset(c, 0, sizeof(*c));
}
