// SPDX-License-Identifier: GPL-2.0
/* TAP runner of the host unit tests. */
#include <limits.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"

static struct unit_test *head, **tail = &head;
int unit_failed;
static char unit_dir[PATH_MAX];

const char *unit_tmp(const char *name)
{
	static struct {
		char name[64];
		char path[PATH_MAX + 64];
	} tab[64];
	static unsigned int n;
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!strcmp(tab[i].name, name))
			return tab[i].path;
	if (n == 64 || strlen(name) >= sizeof(tab[0].name)) {
		fprintf(stderr, "unit_tmp: no room for '%s'\n", name);
		abort();
	}
	snprintf(tab[n].name, sizeof(tab[n].name), "%s", name);
	snprintf(tab[n].path, sizeof(tab[n].path), "%s/%s", unit_dir, name);
	return tab[n++].path;
}

const char *unit_fmt(const char *fmt, ...)
{
	static char buf[4 * PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return buf;
}

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

/* Run @cmd (a printf format with one %s, the file); its output as "#   " lines */
static int prom_run(const char *what, const char *tool, const char *cmd, const char *path)
{
	char line[512], full[PATH_MAX + 256];
	FILE *p;
	int st;

	snprintf(full, sizeof(full), cmd, path);
	p = popen(full, "r");
	if (!p) {
		printf("#   %s: cannot run %s\n", what, tool);
		return -1;
	}
	while (fgets(line, sizeof(line), p))
		printf("#   %s: %s: %s", what, tool, line);
	st = pclose(p);
	if (st) {
		printf("#   %s: %s refuses it (status %d)\n", what, tool, st);
		return -1;
	}
	return 0;
}

void unit_check_prom(const char *what, const char *text)
{
	char path[] = "/tmp/hwtel-unit-prom.XXXXXX";
	int fd;
	FILE *f;

	if (system("command -v promtool > /dev/null 2>&1")) {
		printf("#   %s: promtool not found: install Debian's package prometheus "
		       "(scripts/install-deps)\n", what);
		unit_failed++;
		return;
	}
	fd = mkstemp(path);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		printf("#   %s: cannot create %s\n", what, path);
		unit_failed++;
		if (fd >= 0)
			close(fd);
		return;
	}
	fputs(text, f);
	fclose(f);
	if (prom_run(what, "promtool", "promtool check metrics < %s 2>&1", path))
		unit_failed++;
	if (prom_run(what, "promcheck.py", "python3 ../../selftests/fleet/promcheck.py %s 2>&1", path))
		unit_failed++;
	unlink(path);
}

static char comma_dir[] = "/tmp/hwtel-unit-locale.XXXXXX";
static bool comma_built;

static void comma_cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", comma_dir);
	if (system(cmd))
		printf("#   cannot remove %s\n", comma_dir);
}

/*
 * Switch the whole process to a locale whose decimal separator is a comma.
 * An installed one if there is one, else de_DE.UTF-8 built by localedef(1)
 * into a scratch directory named by LOCPATH. Never skips: when neither
 * works the failure says why and counts against the calling test.
 */
bool unit_setlocale_comma(void)
{
	static const char *const installed[] = {
		"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8",
	};
	char cmd[256];
	unsigned int i;

	for (i = 0; !comma_built && i < sizeof(installed) / sizeof(installed[0]); i++)
		if (setlocale(LC_ALL, installed[i]) && localeconv()->decimal_point[0] == ',')
			return true;
	if (!comma_built) {
		if (!mkdtemp(comma_dir)) {
			printf("#   comma locale: cannot create %s\n", comma_dir);
			unit_failed++;
			return false;
		}
		atexit(comma_cleanup);
		comma_built = true;
		snprintf(cmd, sizeof(cmd), "localedef -i de_DE -f UTF-8 %s/de_DE.UTF-8 >/dev/null 2>&1",
			 comma_dir);
		if (system(cmd))
			printf("#   comma locale: '%s' failed\n", cmd);
		setenv("LOCPATH", comma_dir, 1);
	}
	if (!setlocale(LC_ALL, "de_DE.UTF-8") || localeconv()->decimal_point[0] != ',') {
		printf("#   comma locale: none installed and none built in %s: this test needs\n"
		       "#   localedef and /usr/share/i18n/locales/de_DE (Debian: package locales)\n",
		       comma_dir);
		setlocale(LC_ALL, "C");
		unit_failed++;
		return false;
	}
	return true;
}

void unit_setlocale_c(void)
{
	setlocale(LC_ALL, "C");
}

void unit_same_in_comma_locale(const char *what, const char *c_out, const char *out)
{
	const char *a = c_out ? c_out : "", *b = out ? out : "";

	if (c_out && out && !strcmp(c_out, out))
		return;
	while (*a && *a == *b)
		a++, b++;
	while (a > c_out && a[-1] != '\n')
		a--, b--;
	printf("#   %s differs in the comma locale: \"%.*s\", in C \"%.*s\"\n", what,
	       (int)strcspn(b, "\n"), b, (int)strcspn(a, "\n"), a);
	unit_failed++;
}

int main(void)
{
	struct unit_test *t;
	int n = 0, failed = 0, i = 0;

	const char *tmp = getenv("TMPDIR");

	snprintf(unit_dir, sizeof(unit_dir), "%s/hwtel-unit.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(unit_dir) || setenv("HWTEL_UNIT_DIR", unit_dir, 1)) {
		perror(unit_dir);
		return 1;
	}
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
	if (system(unit_fmt("rm -rf -- '%s'", unit_dir)))
		printf("# could not remove %s\n", unit_dir);
	return failed ? 1 : 0;
}
