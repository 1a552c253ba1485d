// SPDX-License-Identifier: GPL-2.0
/*
 * libhwtel.pc as "make install" writes it (tools/libhwtel.pc.in), asked by
 * pkg-config where no other .pc file exists: only libhwtel.so is
 * installed, which carries its dependencies itself, so a program needs
 * nothing but -lhwtel, and no libnl development files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"

/* pkg-config's first output line for @args, or NULL on failure */
static char *pc(const char *dir, const char *args, char *out, size_t size)
{
	char cmd[512];
	FILE *p;
	bool ok;

	snprintf(cmd, sizeof(cmd), "PKG_CONFIG_LIBDIR=%s PKG_CONFIG_PATH= "
		 "PKG_CONFIG_SYSTEM_LIBRARY_PATH=/usr/lib pkg-config %s libhwtel 2>&1", dir, args);
	p = popen(cmd, "r");
	if (!p)
		return NULL;
	out[0] = '\0';
	ok = fgets(out, (int)size, p) != NULL;
	ok = pclose(p) == 0 && ok;
	out[strcspn(out, "\n")] = '\0';
	while (out[0] && out[strlen(out) - 1] == ' ')	/* pkgconf ends with one */
		out[strlen(out) - 1] = '\0';
	if (!ok)
		printf("#   pkg-config %s: %s\n", args, out);
	return ok ? out : NULL;
}

TEST(pkgconfig_file)
{
	char dir[] = "/tmp/hwtel-unit-pc.XXXXXX", cmd[512], out[256], path[64];

	CHECK(mkdtemp(dir) != NULL);
	snprintf(cmd, sizeof(cmd), "sed -e 's|@PREFIX@|/opt/hwtel|g' -e 's|@LIBDIR@|/opt/hwtel/lib|g' "
		 "-e 's|@VERSION@|1.0|g' ../libhwtel.pc.in > %s/libhwtel.pc", dir);
	CHECK_EQ(system(cmd), 0);
	CHECK_STR(pc(dir, "--modversion", out, sizeof(out)), "1.0");
	CHECK_STR(pc(dir, "--cflags", out, sizeof(out)), "-I/opt/hwtel/include");
	CHECK_STR(pc(dir, "--libs", out, sizeof(out)), "-L/opt/hwtel/lib -lhwtel");
	/* no libhwtel.a is installed: nothing more for --static either */
	CHECK_STR(pc(dir, "--static --libs", out, sizeof(out)), "-L/opt/hwtel/lib -lhwtel");
	snprintf(path, sizeof(path), "%s/libhwtel.pc", dir);
	unlink(path);
	rmdir(dir);
}
