// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * hwtel record: the condition language of triggers, event counters and
 * feedback (Documentation/userspace-api/hwtel.rst, "Conditions").
 *
 *   cond    := expr [ "for" DURATION | "for" UINT "samples" ] [ "hyst" NUMBER ]
 *   expr    := and { ("||" | "or") and }
 *   and     := not { ("&&" | "and") not }
 *   not     := ("!" | "not") not | cmp
 *   cmp     := sum [ (">" | ">=" | "<" | "<=" | "==" | "!=") sum ]
 *   sum     := prod { ("+" | "-") prod }
 *   prod    := unary { ("*" | "/") unary }
 *   unary   := "-" unary | primary
 *   primary := NUMBER [ "k" | "M" | "G" | "%" ] | NAME | "(" expr ")"
 *   NAME    := [A-Za-z_][A-Za-z0-9_.]*   (a metric or an event counter)
 *
 * A comparison is 1 or 0; any other non-zero value is true. With "hyst H",
 * a comparison that held at the previous sample keeps holding until it
 * fails by more than H (a > b holds on while a > b - H; a < b while
 * a < b + H). "for D" holds once the expression has held at every sample
 * of a span of at least D (from the first sample it held at); "for N
 * samples" once it held at N consecutive samples.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rec.h"

enum nkind { N_NUM, N_VAR, N_NEG, N_NOT, N_ADD, N_SUB, N_MUL, N_DIV,
	     N_GT, N_GE, N_LT, N_LE, N_EQ, N_NE, N_AND, N_OR };

struct node {
	enum nkind k;
	double num;
	unsigned int var;
	bool was;		/* comparison held at the previous sample */
	struct node *a, *b;
};

struct rec_expr {
	struct node *root;
	uint64_t hold_ns;
	unsigned int hold_samples;
	double hyst;
	/* hold state */
	bool in_run;
	uint64_t run_t0;
	unsigned int run_n;
};

struct parser {
	const char *s, *p;
	const struct rec_names *names;
	char *err;
	size_t errsize;
	bool failed;
};

static void perr(struct parser *ps, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void perr(struct parser *ps, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (ps->failed)
		return;
	ps->failed = true;
	if (!ps->err || !ps->errsize)
		return;
	n = snprintf(ps->err, ps->errsize, "at column %d: ", (int)(ps->p - ps->s) + 1);
	if (n < 0 || (size_t)n >= ps->errsize)
		return;
	va_start(ap, fmt);
	vsnprintf(ps->err + n, ps->errsize - (size_t)n, fmt, ap);
	va_end(ap);
}

static void skip(struct parser *ps)
{
	while (isspace((unsigned char)*ps->p))
		ps->p++;
}

static bool is_name0(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static bool is_name(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.';
}

/* the next word (a NAME-like token) is @w; consumed if so */
static bool word(struct parser *ps, const char *w)
{
	size_t n = strlen(w);

	skip(ps);
	if (strncmp(ps->p, w, n) || is_name(ps->p[n]))
		return false;
	ps->p += n;
	return true;
}

static bool sym(struct parser *ps, const char *w)
{
	size_t n = strlen(w);

	skip(ps);
	if (strncmp(ps->p, w, n))
		return false;
	ps->p += n;
	return true;
}

static const char *tok_desc(struct parser *ps, char *buf, size_t size)
{
	const char *q = ps->p;
	size_t n = 0;

	if (!*q)
		return "the end";
	if (is_name0(*q) || isdigit((unsigned char)*q)) {
		while (is_name(q[n]) && n + 3 < size)
			n++;
	} else {
		n = 1;
	}
	snprintf(buf, size, "'%.*s'", (int)n, q);
	return buf;
}

static struct node *mk(enum nkind k, struct node *a, struct node *b)
{
	struct node *n = calloc(1, sizeof(*n));

	if (n) {
		n->k = k;
		n->a = a;
		n->b = b;
	}
	return n;
}

static void node_free(struct node *n)
{
	if (!n)
		return;
	node_free(n->a);
	node_free(n->b);
	free(n);
}

static struct node *p_expr(struct parser *ps);

static struct node *p_primary(struct parser *ps)
{
	char buf[64];
	struct node *n;

	skip(ps);
	if (sym(ps, "(")) {
		n = p_expr(ps);
		if (!ps->failed && !sym(ps, ")"))
			perr(ps, "expected ')', got %s", tok_desc(ps, buf, sizeof(buf)));
		return n;
	}
	if (isdigit((unsigned char)*ps->p) || (*ps->p == '.' && isdigit((unsigned char)ps->p[1]))) {
		char *end;
		double v;

		errno = 0;
		v = hwtel_strtod(ps->p, &end);
		if (errno || !isfinite(v)) {
			perr(ps, "bad number");
			return NULL;
		}
		ps->p = end;
		if (*ps->p == 'k' && !is_name(ps->p[1])) {
			v *= 1e3;
			ps->p++;
		} else if (*ps->p == 'M' && !is_name(ps->p[1])) {
			v *= 1e6;
			ps->p++;
		} else if (*ps->p == 'G' && !is_name(ps->p[1])) {
			v *= 1e9;
			ps->p++;
		} else if (*ps->p == '%') {
			ps->p++;
		}
		if (is_name(*ps->p)) {
			perr(ps, "unexpected %s after a number (suffixes: k M G %%)",
			     tok_desc(ps, buf, sizeof(buf)));
			return NULL;
		}
		n = mk(N_NUM, NULL, NULL);
		if (n)
			n->num = v;
		return n;
	}
	if (is_name0(*ps->p)) {
		const char *q = ps->p;
		size_t len = 0;
		unsigned int i;

		while (is_name(q[len]))
			len++;
		for (i = 0; i < ps->names->n; i++)
			if (strlen(ps->names->name[i]) == len && !strncmp(ps->names->name[i], q, len))
				break;
		if (i == ps->names->n) {
			perr(ps, "unknown metric or counter '%.*s' (hwtel record --list shows the metrics)",
			     (int)len, q);
			return NULL;
		}
		ps->p += len;
		n = mk(N_VAR, NULL, NULL);
		if (n)
			n->var = i;
		return n;
	}
	perr(ps, "expected a number, a name or '(', got %s", tok_desc(ps, buf, sizeof(buf)));
	return NULL;
}

static struct node *p_unary(struct parser *ps)
{
	if (sym(ps, "-")) {
		struct node *a = p_unary(ps);

		return ps->failed ? a : mk(N_NEG, a, NULL);
	}
	return p_primary(ps);
}

static struct node *binary(struct parser *ps, struct node *a, enum nkind k,
			   struct node *(*next)(struct parser *))
{
	struct node *b = next(ps), *n;

	if (ps->failed) {
		node_free(a);
		return b;
	}
	n = mk(k, a, b);
	if (!n) {
		node_free(a);
		node_free(b);
		perr(ps, "out of memory");
	}
	return n;
}

static struct node *p_prod(struct parser *ps)
{
	struct node *n = p_unary(ps);

	while (!ps->failed) {
		if (sym(ps, "*"))
			n = binary(ps, n, N_MUL, p_unary);
		else if (sym(ps, "/"))
			n = binary(ps, n, N_DIV, p_unary);
		else
			break;
	}
	return n;
}

static struct node *p_sum(struct parser *ps)
{
	struct node *n = p_prod(ps);

	while (!ps->failed) {
		if (sym(ps, "+"))
			n = binary(ps, n, N_ADD, p_prod);
		else if (sym(ps, "-"))
			n = binary(ps, n, N_SUB, p_prod);
		else
			break;
	}
	return n;
}

static struct node *p_cmp(struct parser *ps)
{
	struct node *n = p_sum(ps);
	static const struct { const char *s; enum nkind k; } ops[] = {
		{ ">=", N_GE }, { "<=", N_LE }, { "==", N_EQ }, { "!=", N_NE },
		{ ">", N_GT }, { "<", N_LT },
	};
	unsigned int i;

	if (ps->failed)
		return n;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (sym(ps, ops[i].s))
			return binary(ps, n, ops[i].k, p_sum);
	return n;
}

static struct node *p_not(struct parser *ps)
{
	skip(ps);
	if ((ps->p[0] == '!' && ps->p[1] != '=' && sym(ps, "!")) || word(ps, "not")) {
		struct node *a = p_not(ps);

		return ps->failed ? a : mk(N_NOT, a, NULL);
	}
	return p_cmp(ps);
}

static struct node *p_and(struct parser *ps)
{
	struct node *n = p_not(ps);

	while (!ps->failed && (sym(ps, "&&") || word(ps, "and")))
		n = binary(ps, n, N_AND, p_not);
	return n;
}

static struct node *p_expr(struct parser *ps)
{
	struct node *n = p_and(ps);

	while (!ps->failed && (sym(ps, "||") || word(ps, "or")))
		n = binary(ps, n, N_OR, p_and);
	return n;
}

int rec_parse_duration(const char *s, uint64_t *ns)
{
	static const struct { const char *u; double mul; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1 },
	};
	unsigned int i;
	char *end;
	double v;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = hwtel_strtod(s, &end);
	if (errno || !isfinite(v) || v < 0)
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].u)) {
			double r = v * units[i].mul;

			if (r > 1e18 || r != floor(r))
				return -EINVAL;
			*ns = (uint64_t)r;
			return 0;
		}
	}
	return -EINVAL;
}

int rec_cond_parse(const char *text, const struct rec_names *names,
		   struct rec_expr **out, char *err, size_t errsize)
{
	struct parser ps = { .s = text, .p = text, .names = names, .err = err,
			     .errsize = errsize };
	struct rec_expr *e;
	char buf[64];

	if (err && errsize)
		err[0] = '\0';
	*out = NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	skip(&ps);
	if (!*ps.p) {
		perr(&ps, "empty condition");
		free(e);
		return -EINVAL;
	}
	e->root = p_expr(&ps);
	if (!ps.failed && word(&ps, "for")) {
		char tok[32];
		size_t n = 0;

		skip(&ps);
		while (isalnum((unsigned char)ps.p[n]) || ps.p[n] == '.')
			n++;
		if (n == 0 || n >= sizeof(tok)) {
			perr(&ps, "expected a duration (5ms, 100us, 2s) or 'N samples' after 'for'");
		} else {
			memcpy(tok, ps.p, n);
			tok[n] = '\0';
			if (word(&ps, tok) && word(&ps, "samples")) {
				char *end;
				unsigned long v = strtoul(tok, &end, 10);

				if (*end || v < 1 || v > 1000000000ul) {
					ps.p -= strlen("samples");
					perr(&ps, "expected a whole number of samples, 1 or more");
				}
				e->hold_samples = (unsigned int)v;
			} else if (rec_parse_duration(tok, &e->hold_ns)) {
				ps.p -= n;
				perr(&ps, "bad duration '%s' (a number and ns, us, ms or s)", tok);
			}
		}
	}
	if (!ps.failed && word(&ps, "hyst")) {
		char *end;

		skip(&ps);
		errno = 0;
		e->hyst = hwtel_strtod(ps.p, &end);
		if (end == ps.p || errno || !isfinite(e->hyst) || e->hyst < 0)
			perr(&ps, "expected a number, 0 or more, after 'hyst'");
		else
			ps.p = end;
	}
	skip(&ps);
	if (!ps.failed && *ps.p)
		perr(&ps, "unexpected %s (an operator, 'for' or 'hyst' expected)",
		     tok_desc(&ps, buf, sizeof(buf)));
	if (ps.failed) {
		rec_cond_free(e);
		return -EINVAL;
	}
	*out = e;
	return 0;
}

void rec_cond_free(struct rec_expr *e)
{
	if (!e)
		return;
	node_free(e->root);
	free(e);
}

static double eval(struct node *n, const double *v, double hyst, bool update)
{
	double a, b, d;
	bool r;

	switch (n->k) {
	case N_NUM:
		return n->num;
	case N_VAR:
		return v[n->var];
	case N_NEG:
		return -eval(n->a, v, hyst, update);
	case N_NOT:
		a = eval(n->a, v, hyst, update);
		return (a == 0 || isnan(a)) ? 1 : 0;
	case N_ADD:
		return eval(n->a, v, hyst, update) + eval(n->b, v, hyst, update);
	case N_SUB:
		return eval(n->a, v, hyst, update) - eval(n->b, v, hyst, update);
	case N_MUL:
		return eval(n->a, v, hyst, update) * eval(n->b, v, hyst, update);
	case N_DIV:
		a = eval(n->a, v, hyst, update);
		b = eval(n->b, v, hyst, update);
		return b == 0 ? NAN : a / b;
	case N_AND:
		/* both sides always run: their comparisons keep their state */
		a = eval(n->a, v, hyst, update);
		b = eval(n->b, v, hyst, update);
		return (a != 0 && !isnan(a) && b != 0 && !isnan(b)) ? 1 : 0;
	case N_OR:
		a = eval(n->a, v, hyst, update);
		b = eval(n->b, v, hyst, update);
		return ((a != 0 && !isnan(a)) || (b != 0 && !isnan(b))) ? 1 : 0;
	default:
		break;
	}
	a = eval(n->a, v, hyst, update);
	b = eval(n->b, v, hyst, update);
	if (isnan(a) || isnan(b)) {
		r = false;
	} else {
		d = a - b;
		switch (n->k) {
		case N_GT:
			r = n->was ? d > -hyst : d > 0;
			break;
		case N_GE:
			r = n->was ? d >= -hyst : d >= 0;
			break;
		case N_LT:
			r = n->was ? d < hyst : d < 0;
			break;
		case N_LE:
			r = n->was ? d <= hyst : d <= 0;
			break;
		case N_EQ:
			r = a == b;
			break;
		default:
			r = a != b;
			break;
		}
	}
	if (update)
		n->was = r;
	return r ? 1 : 0;
}

double rec_expr_value(struct rec_expr *e, const double *vals)
{
	return eval(e->root, vals, e->hyst, false);
}

bool rec_cond_eval(struct rec_expr *e, const double *vals, uint64_t t_ns)
{
	double v = eval(e->root, vals, e->hyst, true);
	bool now = v != 0 && !isnan(v);

	if (!now) {
		e->in_run = false;
		e->run_n = 0;
		return false;
	}
	if (!e->in_run) {
		e->in_run = true;
		e->run_t0 = t_ns;
		e->run_n = 0;
	}
	e->run_n++;
	if (e->hold_samples)
		return e->run_n >= e->hold_samples;
	return t_ns - e->run_t0 >= e->hold_ns;
}

static void reset(struct node *n)
{
	if (!n)
		return;
	n->was = false;
	reset(n->a);
	reset(n->b);
}

void rec_cond_reset(struct rec_expr *e)
{
	reset(e->root);
	e->in_run = false;
	e->run_n = 0;
}

static bool uses(const struct node *n, unsigned int idx)
{
	if (!n)
		return false;
	if (n->k == N_VAR && n->var == idx)
		return true;
	return uses(n->a, idx) || uses(n->b, idx);
}

bool rec_cond_uses(const struct rec_expr *e, unsigned int idx)
{
	return uses(e->root, idx);
}
