/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * hwtel record/report internals: the trigger expression language
 * (rec_expr.c), the flight-recorder engine (rec_engine.c), the capture file
 * (rec_file.c) and its views (rec_report.c).
 *
 * The engine knows nothing of perf: it is fed one sample at a time (a time
 * and one double per metric) and writes what it keeps through a sink, so the
 * unit tests drive it with scripted sample streams.
 *
 * Documentation/userspace-api/hwtel.rst, "hwtel record", describes the
 * grammar, the storage model and the file format.
 */
#ifndef _HWTEL_REC_H
#define _HWTEL_REC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define REC_NAME_MAX	96
#define REC_MAX_METRICS	512
#define REC_MAX_COUNTERS 16
#define REC_MAX_FEEDBACK 8
#define REC_MAX_EVENTS	8
#define REC_MIN_PERIOD_NS 100000ull

/* ---------------- expressions ---------------- */

/* Names a condition may refer to: metrics first, then counters. */
struct rec_names {
	unsigned int n;
	const char *const *name;
};

struct rec_expr;

/*
 * Parse @text ("COND [for DURATION|for N samples] [hyst H]") against
 * @names. Returns 0 or -EINVAL with a message in @err (position and what
 * was expected or unknown).
 */
int rec_cond_parse(const char *text, const struct rec_names *names,
		   struct rec_expr **out, char *err, size_t errsize);
void rec_cond_free(struct rec_expr *e);
/* Evaluate one sample: @vals by name index; true when the condition holds
 * (after hold and hysteresis). A NaN operand makes a comparison false.
 */
bool rec_cond_eval(struct rec_expr *e, const double *vals, uint64_t t_ns);
/* The raw value of the expression (no hold), for tests. */
double rec_expr_value(struct rec_expr *e, const double *vals);
void rec_cond_reset(struct rec_expr *e);
/* Does the condition mention name index @idx? */
bool rec_cond_uses(const struct rec_expr *e, unsigned int idx);

/* "1ms", "100us", "2.5s", "500000ns", "1000" (ns): 0 or -EINVAL */
int rec_parse_duration(const char *s, uint64_t *ns);

/* ---------------- engine ---------------- */

enum rec_pos_kind { REC_POS_BEGIN, REC_POS_CENTER, REC_POS_END, REC_POS_PERCENT };

/* Samples before the trigger sample in a shot of @n (the trigger sample is
 * the (pre+1)-th, n - pre - 1 follow it): round(percent * (n - 1) / 100).
 */
unsigned int rec_pre_count(unsigned int n, double percent);

enum rec_cause {
	REC_CAUSE_NONE = 0,	/* stopped before any trigger: the ring only */
	REC_CAUSE_EXPR = 1,	/* the --trigger condition */
	REC_CAUSE_SIGNAL = 2,	/* SIGUSR1 */
	REC_CAUSE_COMMAND = 3,	/* the end of -- COMMAND */
};

enum rec_action_kind { REC_ACT_PERIOD = 1, REC_ACT_ENABLE = 2, REC_ACT_DISABLE = 3 };

struct rec_action {
	enum rec_action_kind kind;
	uint64_t period_ns;	/* REC_ACT_PERIOD */
	char set[32];		/* REC_ACT_ENABLE, _DISABLE: a source set */
};

/* "period 100us" | "enable SET" | "disable SET" */
int rec_action_parse(const char *text, struct rec_action *a, char *err, size_t errsize);

/* REC_CNT_COUNT adds an event's occurrences in the sample's interval */
enum rec_cnt_op { REC_CNT_INC, REC_CNT_DEC, REC_CNT_CLEAR, REC_CNT_COUNT };

struct rec_counter {
	char name[REC_NAME_MAX];
	unsigned int nrules;
	enum rec_cnt_op op[3];
	struct rec_expr *cond[3];
	unsigned int track[3];	/* REC_CNT_COUNT: the event's track */
	unsigned int bits;	/* 0: unbounded; else it wraps modulo 2^bits */
	double value;
};

/* What a gap record says was lost just before the sample that follows it */
enum rec_gap_kind {
	REC_GAP_LATE = 1,	/* count periods missed: the recorder was late */
	REC_GAP_STALE = 2,	/* count reads that got no new snapshot (their values NaN) */
	/* an --event's (with its track): count occurrences its perf ring had
	 * no room for (PERF_RECORD_LOST; they count as occurrences too)
	 */
	REC_GAP_LOST = 3,
	/* an --event's: count times the kernel throttled it
	 * (PERF_RECORD_THROTTLE; its occurrences until it was unthrottled
	 * were neither recorded nor counted)
	 */
	REC_GAP_THROTTLED = 4,
};

/* the gaps just before one sample: the first time and the count, by kind */
struct rec_gaps {
	uint64_t late_t, late, stale_t, stale;
};

/* one event's occurrences in one sample's interval: the first's time, how
 * many (0: none)
 */
struct rec_evsum {
	uint64_t first, n;
	/* its gaps (REC_GAP_LOST, REC_GAP_THROTTLED): the first's time, the
	 * count (0: none); the file ring does not carry them
	 */
	uint64_t lost_t, lost, thr_t, thr;
};

/* Where the engine puts what it keeps. Each returns 0 or a negative errno. */
struct rec_sink {
	void *ctx;
	/* a shot starts: its pre-trigger samples follow (then the rest) */
	int (*shot_begin)(void *ctx, unsigned int shot, enum rec_cause cause,
			  unsigned int pre, uint64_t trig_t_ns);
	int (*sample)(void *ctx, uint64_t t_ns, const double *vals);
	int (*shot_end)(void *ctx, unsigned int shot, unsigned int nsamples);
	int (*note)(void *ctx, uint64_t t_ns, const char *text);
	/* the samples that follow were taken at @period_ns (called before the
	 * first sample whose period differs from the configured one or from
	 * the one last passed; may be NULL)
	 */
	int (*period)(void *ctx, uint64_t period_ns);
	/* a gap just before the next sample (see rec_engine_gap; may be NULL) */
	int (*gap)(void *ctx, uint64_t t_ns, enum rec_gap_kind kind, uint64_t count);
	/* an armed sample entered the engine's pre-trigger ring (after its
	 * counters; may be NULL): a copy for a reader of a capture whose
	 * writer died before the trigger (the engine still flushes its own
	 * ring through shot_begin and sample), with its gaps and its @nev
	 * events' summaries (@ev, in the order rec_engine_add_event added them)
	 */
	int (*ring)(void *ctx, uint64_t t_ns, uint64_t period_ns, const struct rec_gaps *g,
		    const struct rec_evsum *ev, unsigned int nev, const double *vals);
	/* @count occurrences of the event of @track in the next sample's
	 * interval, the first at @t_ns (after the gaps; may be NULL)
	 */
	int (*event)(void *ctx, uint64_t t_ns, unsigned int track, uint64_t count);
	/* a gap of the event of @track (REC_GAP_LOST, REC_GAP_THROTTLED) in
	 * the next sample's interval, the first at @t_ns (after the sample's
	 * other gaps, before its events; may be NULL)
	 */
	int (*event_gap)(void *ctx, uint64_t t_ns, enum rec_gap_kind kind, unsigned int track,
			 uint64_t count);
};

struct rec_config {
	unsigned int capacity;	/* samples of one shot (N) */
	double position;	/* pre-trigger share, percent */
	unsigned int shots;	/* 1.. */
	uint64_t period_ns;	/* the sample period at the start */
	unsigned int nmetrics;
	const char *const *metric;	/* names */
};

struct rec_engine;

/* Returns NULL (and an error in @err) on bad configuration. */
struct rec_engine *rec_engine_new(const struct rec_config *cfg, char *err, size_t errsize);
void rec_engine_free(struct rec_engine *e);
/* Names the conditions may use: metrics, then the counters added so far. */
const struct rec_names *rec_engine_names(struct rec_engine *e);
/*
 * "NAME[:BITS] inc COND[; dec COND][; clear COND]": rules run in that order
 * each sample, each adding/subtracting 1 or clearing when its COND holds;
 * a rule "count EVENT" adds the occurrences of an event in the sample's
 * interval; with BITS (1 to 53) the value wraps modulo 2^BITS.
 */
int rec_engine_add_counter(struct rec_engine *e, const char *text, char *err, size_t errsize);
/*
 * A discrete event NAME (a tracepoint, a perf event: see rec_engine_event),
 * before the counters. Its track, after the metrics and earlier events,
 * holds its occurrences in each sample's interval; conditions may name it,
 * and "count NAME" counter rules add it. Returns 0 or -EINVAL.
 */
int rec_engine_add_event(struct rec_engine *e, const char *name, char *err, size_t errsize);
/*
 * @count occurrences of event @ev (0-based, in the order added) at @t_ns,
 * reported at any time: they count at the first sample pushed whose time
 * is @t_ns or later (the one whose interval, after the previous sample up
 * to its own time, contains @t_ns), or at the next sample if that one was
 * pushed already. 0, -EINVAL (no such event) or -ENOMEM.
 */
int rec_engine_event(struct rec_engine *e, unsigned int ev, uint64_t t_ns, uint64_t count);
/*
 * A gap of event @ev at @t_ns: @count occurrences its ring had no room for
 * (REC_GAP_LOST; report them with rec_engine_event too, if they are to be
 * counted) or @count throttles by the kernel (REC_GAP_THROTTLED). It goes
 * to the sample rec_engine_event would count an occurrence at @t_ns in,
 * as a gap record with the event's track before it. 0, -EINVAL (no such
 * event or kind) or -ENOMEM.
 */
int rec_engine_event_gap(struct rec_engine *e, unsigned int ev, uint64_t t_ns,
			 enum rec_gap_kind kind, uint64_t count);
int rec_engine_set_trigger(struct rec_engine *e, const char *text, char *err, size_t errsize);
/* "COND => ACTION": the action runs on every rising edge of COND. */
int rec_engine_add_feedback(struct rec_engine *e, const char *text, char *err, size_t errsize);
/* an action run when the trigger fires */
int rec_engine_add_on_trigger(struct rec_engine *e, const char *text, char *err, size_t errsize);

/* Tracks stored per sample: the metrics, the events, then the counters */
unsigned int rec_engine_ntracks(const struct rec_engine *e);
const char *rec_engine_track(const struct rec_engine *e, unsigned int i);
/* Events added, and the track of event @i (0-based): the metrics' count + @i */
unsigned int rec_engine_nevents(const struct rec_engine *e);
unsigned int rec_engine_event_track(const struct rec_engine *e, unsigned int i);

enum rec_state { REC_ARMED, REC_POST, REC_DONE };

/*
 * One sample at @t_ns; @vals has one value per metric (NaN: not measured).
 * @ext is a trigger from outside (REC_CAUSE_SIGNAL/COMMAND) or NONE.
 * Actions to run (feedback, on-trigger) are appended to @acts (at most
 * @maxacts; *nacts set). Returns the state after the sample or a negative
 * errno from the sink.
 */
int rec_engine_push(struct rec_engine *e, uint64_t t_ns, const double *vals,
		    enum rec_cause ext, struct rec_action *acts, unsigned int maxacts,
		    unsigned int *nacts, const struct rec_sink *sink);
/*
 * Report a gap before the next rec_engine_push(): @count periods missed
 * from @t_ns (REC_GAP_LATE) or @count stale reads at @t_ns (REC_GAP_STALE).
 * The gap travels with that sample: written before it if it is kept,
 * dropped with it if the ring drops it. -EINVAL for any other kind (an
 * event's gaps: rec_engine_event_gap).
 */
int rec_engine_gap(struct rec_engine *e, uint64_t t_ns, enum rec_gap_kind kind, uint64_t count);
/* Stop: an armed ring is written as an untriggered shot, a shot in its post
 * phase ends short.
 */
int rec_engine_finish(struct rec_engine *e, const struct rec_sink *sink);
/* The period of the next sample: the configured one until a 'period'
 * action (which applies from the sample after the one that ran it)
 */
uint64_t rec_engine_period(const struct rec_engine *e);
/* Samples pushed so far (the index of the next sample, from 0) */
uint64_t rec_engine_index(const struct rec_engine *e);
unsigned int rec_engine_shots_done(const struct rec_engine *e);

/* ---------------- capture file ---------------- */

#define REC_MAGIC	"HWTELREC"
#define REC_VERSION	2	/* written without a file ring; 1 is read too */
#define REC_VERSION_RING 3	/* written with a file ring (rec_header.ring_slots) */
#define REC_SYNC_EVERY	1000	/* samples between sync records */

/*
 * Record types and their fields (Documentation/userspace-api/hwtel.rst,
 * "Capture file format"). Version 2 frames each record as: u8 type,
 * uvarint payload length, the payload (the fields below), u32le CRC32C of
 * the type, length and payload. Version 1 has the type and the fields
 * only, and an f32 per track where version 2 has an f64.
 */
enum rec_rtype {
	REC_R_SYNC = 'S',	/* u64 mono_ns, u64 real_ns */
	REC_R_SAMPLE = 'D',	/* uvarint ticks since the previous sync or sample,
				 * f64 (v1: f32) x ntracks */
	REC_R_SHOT = 'B',	/* uvarint shot, u8 cause, uvarint pre, u64 trigger mono_ns */
	REC_R_SHOT_END = 'E',	/* uvarint shot, uvarint samples */
	REC_R_NOTE = 'N',	/* u64 mono_ns, uvarint length, text */
	REC_R_END = 'Z',	/* uvarint shots, u64 samples */
	REC_R_PERIOD = 'P',	/* u64 period_ns of the samples that follow (v2) */
	REC_R_GAP = 'G',	/* u64 mono_ns, u8 kind, uvarint count: lost just
				 * before the next sample (v2); kinds 3 and 4
				 * (an event's) then uvarint track */
	REC_R_EVENT = 'V',	/* u64 mono_ns of the first occurrence, uvarint
				 * track, uvarint count: an event's occurrences
				 * in the next sample's interval (v2) */
};

/* CRC32C (Castagnoli) of @n bytes, continuing @crc (0 to start) */
uint32_t rec_crc32c(uint32_t crc, const void *p, size_t n);

struct rec_writer;

struct rec_header {
	uint64_t period_ns;
	unsigned int capacity, pre, shots;
	double position;
	char clock[32];		/* "ns" */
	char command[256];	/* the recorder's command line, informative */
	unsigned int ntracks;
	char (*track)[REC_NAME_MAX];
	/* slots of the ring kept in the file (version 3), 0 for none; the
	 * recorder asks for pre + 1, so that the slot being overwritten is
	 * never one of the last pre samples
	 */
	unsigned int ring_slots;
	unsigned int slot_bytes;	/* read from the file; the writer sets it */
	/* with ring_slots: the tracks of the events (rec_engine_add_event's
	 * order), whose first time and count each slot carries as the records
	 * carry them in 'V' records
	 */
	unsigned int nring_events;
	unsigned int ring_event_track[REC_MAX_EVENTS];
};

/* Bytes of one ring slot for @ntracks and @nevents (Documentation, "The
 * file ring")
 */
size_t rec_slot_bytes(unsigned int ntracks, unsigned int nevents);

/*
 * Write the header; @fd is owned by the writer. With h->ring_slots, the
 * ring region follows the header, preallocated and mapped shared (@fd
 * must be open for reading and writing).
 */
int rec_writer_open(int fd, const struct rec_header *h, struct rec_writer **out);
/* Hand the records written so far to the kernel (no sync to disk): after
 * this, a SIGKILL of the writer leaves them in the file.
 */
int rec_writer_flush(struct rec_writer *w);
/* rec_writer_flush(), then write the file ring and the records to the
 * disk (msync and fdatasync)
 */
int rec_writer_sync(struct rec_writer *w);
/* The sink that writes the engine's output to @w (@w in ctx) */
void rec_writer_sink(struct rec_writer *w, struct rec_sink *sink);
/* End record and close; returns 0 or negative errno. */
int rec_writer_close(struct rec_writer *w, bool complete);
/* For tests: a writer with a fixed realtime-monotonic offset */
void rec_writer_set_clock(struct rec_writer *w, int64_t real_minus_mono_ns);

struct rec_sample {
	uint64_t mono_ns, real_ns;	/* reconstructed */
	unsigned int shot;
	unsigned int index;		/* within the shot */
	uint64_t period_ns;		/* the period it was taken at */
	uint64_t missed, stale;		/* gaps just before it, by kind */
	double *vals;			/* ntracks */
};

struct rec_shot {
	unsigned int number;
	enum rec_cause cause;
	unsigned int pre;		/* samples before the trigger sample */
	uint64_t trig_mono_ns;
	unsigned int first, nsamples;	/* into rec_capture.samples */
	bool ended;			/* its end record was read */
};

struct rec_note {
	uint64_t mono_ns;
	char text[120];
};

struct rec_gap {
	uint64_t mono_ns;
	enum rec_gap_kind kind;
	uint64_t count;
	unsigned int sample;		/* the sample after it (into samples) */
	unsigned int track;		/* REC_GAP_LOST, _THROTTLED: the event's */
};

struct rec_event {
	uint64_t mono_ns;		/* its first occurrence in the interval */
	unsigned int track;		/* the event's track */
	uint64_t count;			/* occurrences in the interval */
	unsigned int sample;		/* the sample whose interval holds it */
};

struct rec_capture {
	struct rec_header h;
	unsigned int nsamples, nshots, nnotes;
	struct rec_sample *samples;
	struct rec_shot *shots;
	struct rec_note *notes;
	double *vals;
	unsigned int version;	/* of the file */
	bool complete;		/* the end record was read */
	size_t bytes, good_bytes;	/* file size, bytes of whole records */
	unsigned int nsyncs;
	unsigned int nskipped;	/* records of unknown types, skipped */
	unsigned int ngaps;
	struct rec_gap *gaps;
	uint64_t missed_periods, stale_reads;	/* the gaps' totals */
	uint64_t lost_occurrences, throttles;	/* the events' gaps' totals */
	/* version 3: the file ring, read only when the end record is absent */
	unsigned int ring_valid;	/* slots whose checksum holds */
	unsigned int ring_torn;		/* written slots whose checksum fails */
	unsigned int recovered;		/* samples taken from the ring */
	unsigned int nevents;
	struct rec_event *events;
};

/* Read a capture (version 1, 2 or 3); a cut file reads up to its last whole
 * record (complete = false), as does a version 2 file at a record whose
 * checksum fails; @err then says where and why. Records of unknown types
 * are skipped (nskipped). Gap and event records go with the sample record
 * after them: those after the last one (the file ends before their sample)
 * are not read. A version 3 file without its end record (its
 * writer died) also gets the file ring's samples later than the last
 * sample of the records (recovered): the newest @pre of them, appended to
 * the last shot if they precede its trigger and it has none of its own
 * after its pre-trigger ones, else as an untriggered shot. -EINVAL for a
 * bad header, with a message in @err.
 */
int rec_read(const char *path, struct rec_capture *c, char *err, size_t errsize);
int rec_read_mem(const unsigned char *buf, size_t len, struct rec_capture *c,
		 char *err, size_t errsize);
void rec_capture_free(struct rec_capture *c);

/* ---------------- views ---------------- */

enum rec_view { REC_VIEW_TEXT, REC_VIEW_CSV, REC_VIEW_JSON, REC_VIEW_TRACE, REC_VIEW_SVG };

struct rec_view_opts {
	enum rec_view view;
	unsigned int context;	/* text: samples either side of the trigger (0 = all) */
	unsigned int nsel;	/* chosen tracks (0 = all) */
	unsigned int sel[64];
	int shot;		/* -1 = all shots */
};

int rec_view(FILE *f, const struct rec_capture *c, const struct rec_view_opts *o);

/* uvarint (LEB128) helpers */
size_t rec_put_uvarint(unsigned char *p, uint64_t v);
/* returns bytes consumed, 0 if @len is too short or the varint too long */
size_t rec_get_uvarint(const unsigned char *p, size_t len, uint64_t *v);

#endif
