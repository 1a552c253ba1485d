// SPDX-License-Identifier: GPL-2.0
/* TAP runner of the host unit tests. */
#include <stdlib.h>

#include "unit.h"

static struct unit_test *head, **tail = &head;
int unit_failed;

void unit_register(struct unit_test *t)
{
	*tail = t;
	tail = &t->next;
}

char *unit_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		if (len)
			*len = (size_t)n;
	}
	return buf;
}

bool unit_golden(const char *got, const char *path, bool updatable)
{
	char *want = unit_slurp(path, NULL);
	const char *a, *b;
	int line = 1;
	bool ok;

	if (!want && updatable && getenv("HWTEL_UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "wb");

		if (f) {
			fputs(got, f);
			fclose(f);
		}
		printf("#   wrote golden %s\n", path);
		return true;
	}
	if (!want) {
		printf("#   golden %s missing\n", path);
		unit_failed++;
		return false;
	}
	ok = !strcmp(got, want);
	if (!ok && updatable && getenv("HWTEL_UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "wb");

		if (f) {
			fputs(got, f);
			fclose(f);
		}
		printf("#   rewrote golden %s\n", path);
		free(want);
		return true;
	}
	if (!ok) {
		for (a = got, b = want; *a && *a == *b; a++, b++)
			if (*a == '\n')
				line++;
		printf("#   output differs from %s at line %d\n", path, line);
		printf("#   got:  \"%.60s\"\n#   want: \"%.60s\"\n", a, b);
		unit_failed++;
	}
	free(want);
	return ok;
}

int main(void)
{
	struct unit_test *t;
	int n = 0, failed = 0, i = 0;

	for (t = head; t; t = t->next)
		n++;
	printf("TAP version 13\n1..%d\n", n);
	for (t = head; t; t = t->next) {
		unit_failed = 0;
		t->fn();
		i++;
		if (unit_failed) {
			failed++;
			printf("not ok %d %s\n", i, t->name);
		} else {
			printf("ok %d %s\n", i, t->name);
		}
		fflush(stdout);
	}
	printf("# %d passed, %d failed\n", n - failed, failed);
	return failed ? 1 : 0;
}
