// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* libhwtel: errors, small file helpers, device resolution, atomic writes. */

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libhwtel/nfb.h>

#include "internal.h"

static __thread char last_error[512];
static char sysfs_root[256];

const char *hwtel_last_error(void)
{
	return last_error;
}

void hwtel_clear_error(void)
{
	last_error[0] = '\0';
}

/* Formatted aside first: the last error may be one of the arguments. */
int hwtel_err(int err, const char *fmt, ...)
{
	char msg[sizeof(last_error)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	memcpy(last_error, msg, sizeof(last_error));
	return err;
}

void hwtel_vdiag(FILE *f, const char *prefix, const char *fmt, va_list ap)
{
	if (!f)
		return;
	fputs(prefix, f);
	vfprintf(f, fmt, ap);
	fputc('\n', f);
}

void hwtel_numeric_c(struct hwtel_numeric *n)
{
	n->loc = (locale_t)0;
	if (!strcmp(nl_langinfo(RADIXCHAR), "."))
		return;		/* the common case: nothing to do */
	/*
	 * The whole C locale, not the thread's locale with LC_NUMERIC
	 * replaced: glibc (2.36) returns its static C locale object for
	 * this, where newlocale() on a duplocale() base allocates and, with
	 * LOCPATH set, leaks a little at every call.
	 */
	n->loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	if (n->loc)
		n->saved = uselocale(n->loc);
}

void hwtel_numeric_restore(struct hwtel_numeric *n)
{
	if (!n->loc)
		return;
	uselocale(n->saved);
	freelocale(n->loc);
	n->loc = (locale_t)0;
}

double hwtel_strtod(const char *s, char **end)
{
	struct hwtel_numeric n;
	double v;
	int err;

	hwtel_numeric_c(&n);
	v = strtod(s, end);
	err = errno;
	hwtel_numeric_restore(&n);
	errno = err;
	return v;
}

void hwtel_set_sysfs_root(const char *root)
{
	snprintf(sysfs_root, sizeof(sysfs_root), "%s", root ? root : "");
}

const char *hwtel_sysfs_root(void)
{
	const char *env;

	if (sysfs_root[0])
		return sysfs_root;
	/* not in a setuid, setgid or setcap program: its caller's environment
	 * must not choose the files it trusts
	 */
	env = secure_getenv("HWTEL_SYSFS");
	return env && env[0] ? env : "/sys";
}

uint64_t hwtel_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int hwtel_read_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	char more;
	int fd, e;

	if (size == 0)
		return -EINVAL;
	buf[0] = '\0';		/* an error leaves no value, not a cut one */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	e = n < 0 ? -errno : 0;
	/* one byte more: the file did not fit */
	if (!e && n == (ssize_t)size - 1 && read(fd, &more, 1) > 0)
		e = -EFBIG;
	close(fd);
	if (e) {
		buf[0] = '\0';
		return e;
	}
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return (int)n;
}

int hwtel_grow_pair(uint64_t **a, uint64_t **b, unsigned int *n, unsigned int want)
{
	uint64_t *nb;
	unsigned int i;

	if (*n >= want)
		return 0;
	nb = calloc(2 * (size_t)want, sizeof(*nb));
	if (!nb)
		return -ENOMEM;
	for (i = 0; i < *n; i++) {
		nb[i] = (*a)[i];
		nb[want + i] = (*b)[i];
	}
	free(*a);
	*a = nb;
	*b = nb + want;
	*n = want;
	return 0;
}

int hwtel_parse_u64(const char *s, uint64_t *val)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	*val = v;
	return 0;
}

int hwtel_read_uint(const char *path, unsigned long long *val)
{
	char buf[64];
	uint64_t v;
	int ret;

	ret = hwtel_read_file(path, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	if (hwtel_parse_u64(buf, &v))
		return -EINVAL;
	*val = v;
	return 0;
}

static int cmp_base(const void *a, const void *b, void *arg)
{
	size_t plen = strlen(arg);
	const char *x = (const char *)a + plen, *y = (const char *)b + plen;
	unsigned long long vx = strtoull(x, NULL, 16), vy = strtoull(y, NULL, 16);

	if (vx != vy)
		return vx < vy ? -1 : 1;
	return strcmp(a, b);
}

void hwtel_pmu_list_free(char **names)
{
	char **p;

	if (!names)
		return;
	for (p = names; *p; p++)
		free(*p);
	free(names);
}

static int cmp_base_ptr(const void *a, const void *b, void *prefix)
{
	return cmp_base(*(char *const *)a, *(char *const *)b, prefix);
}

int hwtel_pmu_list(const char *prefix, char ***names)
{
	char dir[PATH_MAX];
	char **v = NULL;
	struct dirent *de;
	int n = 0, cap = 0;
	DIR *d;

	hwtel_clear_error();
	*names = NULL;
	snprintf(dir, sizeof(dir), "%s/bus/event_source/devices", hwtel_sysfs_root());
	d = opendir(dir);
	if (!d && errno != ENOENT)
		return hwtel_err(-errno, "cannot list %s: %s", dir, strerror(errno));
	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, prefix, strlen(prefix)))
			continue;
		if (n + 1 >= cap) {
			void *nv;

			cap = cap ? 2 * cap : 8;
			nv = realloc(v, (size_t)cap * sizeof(*v));
			if (!nv)
				goto nomem;
			v = nv;
		}
		v[n] = strdup(de->d_name);
		if (!v[n])
			goto nomem;
		v[++n] = NULL;
	}
	if (d)
		closedir(d);
	if (!v) {	/* none (or no event_source bus: no PMU at all) */
		v = calloc(1, sizeof(*v));
		if (!v)
			return -ENOMEM;
	}
	if (n > 1)
		qsort_r(v, (size_t)n, sizeof(*v), cmp_base_ptr, (void *)prefix);
	*names = v;
	return n;
nomem:
	closedir(d);
	if (v)
		v[n] = NULL;
	hwtel_pmu_list_free(v);
	return -ENOMEM;
}

static bool is_chardev(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISCHR(st.st_mode);
}

int hwtel_resolve_device(const char *prefix, const char *module,
			 const char *device, unsigned int index,
			 char *name, size_t size)
{
	char **names = NULL;
	char copy[PATH_MAX];
	const char *sel = device;
	uint64_t num;
	int n, i, found = -1;
	bool by_index = false, by_base = false;

	n = hwtel_pmu_list(prefix, &names);
	if (n < 0) {
		hwtel_pmu_list_free(names);
		return n;
	}
	if (sel && *sel) {
		const char *slash;
		size_t len;

		/* a sysfs path may end in '/' */
		snprintf(copy, sizeof(copy), "%s", sel);
		len = strlen(copy);
		while (len > 1 && copy[len - 1] == '/')
			copy[--len] = '\0';
		sel = copy;
		slash = strrchr(sel, '/');

		if (!strncmp(sel, "/dev/nfb", 8) && is_chardev(sel)) {
			/*
			 * A real NDK card: telemetry node @index of its FDT
			 * (the reference tool's -d and -i), attached by PCI
			 * address ('hwtel nfb attach')
			 */
			char nm[HWTEL_NAME_MAX];
			int ret = hwtel_nfb_resolve(sel, index, nm, sizeof(nm));

			if (ret) {
				hwtel_pmu_list_free(names);
				return ret;
			}
			for (i = 0; i < n; i++)
				if (!strcmp(names[i], nm))
					found = i;
			hwtel_pmu_list_free(names);
			if (found < 0)
				return hwtel_err(-ENOENT, "no PMU %s for %s node %u: attach it with 'hwtel nfb attach -d %s'",
						 nm, sel, index, sel);
			snprintf(name, size, "%s", nm);
			return 0;
		} else if (!strncmp(sel, "/dev/nfb", 8)) {
			/* no such card: /dev/nfb0, /dev/nfb/0 name instance N */
			const char *p = sel + strlen(sel);

			while (p > sel && isdigit((unsigned char)p[-1]))
				p--;
			if (!*p || hwtel_parse_u64(p, &num)) {
				hwtel_pmu_list_free(names);
				return hwtel_err(-EINVAL, "cannot map NFB device %s to a telemetry instance; use a PMU name or an instance number", sel);
			}
			index = (unsigned int)num;
			by_index = true;
		} else if (slash) {
			sel = slash[1] ? slash + 1 : sel;
		}
		if (!by_index && !strncmp(sel, "0x", 2) && !hwtel_parse_u64(sel, &num)) {
			by_base = true;
		} else if (!by_index && !hwtel_parse_u64(sel, &num)) {
			index = (unsigned int)num;
			by_index = true;
		}
		if (!by_index) {
			for (i = 0; i < n; i++) {
				if (by_base) {
					if (strtoull(names[i] + strlen(prefix), NULL, 16) == num)
						found = i;
				} else if (!strcmp(names[i], sel)) {
					found = i;
				}
			}
			if (found < 0) {
				hwtel_pmu_list_free(names);
				return hwtel_err(-ENOENT, "no PMU %s%s (is module %s loaded? try 'modprobe %s'; 'hwtel list' shows what is present)",
						 by_base ? prefix : "", by_base ? sel + 2 : sel,
						 module, module);
			}
		}
	} else {
		by_index = true;
	}
	if (by_index) {
		if (n == 0) {
			hwtel_pmu_list_free(names);
			return hwtel_err(-ENOENT, "no %s* PMU found: load the driver with 'modprobe %s'",
					 prefix, module);
		}
		if ((int)index >= n) {
			hwtel_pmu_list_free(names);
			return hwtel_err(-ENOENT, "instance %u does not exist: %d %s* PMU(s) found",
					 index, n, prefix);
		}
		found = (int)index;
	}
	snprintf(name, size, "%s", names[found]);
	hwtel_pmu_list_free(names);
	return 0;
}

/*
 * Write all of @text to @fd; 0 or -errno. EINTR is returned, not retried:
 * only a handler installed without SA_RESTART gets it, from a write blocked
 * on a pipe or FIFO that is not read, and such a handler means to stop it.
 */
static int write_all(int fd, const char *text, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t w = write(fd, text + off, len - off);

		if (w < 0)
			return -errno;
		off += (size_t)w;
	}
	return 0;
}

/*
 * A target that is not a regular file (a device, a FIFO, a socket's path)
 * is written where it is: replacing it would turn it into a file, as
 * rename() did to /dev/full once.
 */
static int write_in_place(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY), ret;

	if (fd < 0)
		return hwtel_err(-errno, "cannot open %s: %s", path, strerror(errno));
	ret = write_all(fd, text, len);
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (ret)
		return hwtel_err(ret, "cannot write %s: %s", path, strerror(-ret));
	return 0;
}

/* @dir (resolved) is /proc/PID/fd or /proc/PID/task/TID/fd of this process */
static bool own_fd_dir(const char *dir)
{
	long pid = 0, tid = 0;
	int used = -1;

	if (strncmp(dir, "/proc/", 6) || !isdigit((unsigned char)dir[6]))
		return false;
	if (sscanf(dir, "/proc/%ld/fd%n", &pid, &used) == 1 && used > 0 && !dir[used])
		return pid == (long)getpid();
	used = -1;
	if (sscanf(dir, "/proc/%ld/task/%ld/fd%n", &pid, &tid, &used) == 2 && used > 0 &&
	    !dir[used])
		return pid == (long)getpid();
	return false;
}

/*
 * The descriptor of this process that @path names, through /dev/stdout,
 * /dev/fd/N, /proc/self/fd/N or links to them; -1 when it names none.
 * Each hop's directory is resolved with realpath() and the final entry is
 * looked at without following it: /proc/self/fd/N is a link to the file
 * the descriptor holds, which is what must not be replaced.
 */
static int own_descriptor(const char *path)
{
	char cur[PATH_MAX], dir[PATH_MAX], rdir[PATH_MAX], tgt[PATH_MAX];
	int hops;

	if (snprintf(cur, sizeof(cur), "%s", path) >= (int)sizeof(cur))
		return -1;
	for (hops = 0; hops < 40; hops++) {
		char *slash = strrchr(cur, '/');
		const char *base = slash ? slash + 1 : cur, *p;
		struct stat st;
		ssize_t n;

		if (!slash)
			snprintf(dir, sizeof(dir), ".");
		else if (slash == cur)
			snprintf(dir, sizeof(dir), "/");
		else
			snprintf(dir, sizeof(dir), "%.*s", (int)(slash - cur), cur);
		if (!realpath(dir, rdir))
			return -1;
		for (p = base; isdigit((unsigned char)*p); p++)
			;
		if (*base && !*p && p - base < 10 && own_fd_dir(rdir)) {
			int fd = atoi(base);

			return fcntl(fd, F_GETFD) < 0 ? -1 : fd;
		}
		if (lstat(cur, &st) || !S_ISLNK(st.st_mode))
			return -1;
		n = readlink(cur, tgt, sizeof(tgt) - 1);
		if (n < 0)
			return -1;
		tgt[n] = '\0';
		if (tgt[0] == '/') {
			memcpy(cur, tgt, (size_t)n + 1);
		} else if (snprintf(cur, sizeof(cur), "%s/%s", strcmp(rdir, "/") ? rdir : "",
				    tgt) >= (int)sizeof(cur)) {
			return -1;
		}
	}
	return -1;
}

int hwtel_write_atomic(const char *path, const char *text, size_t len)
{
	char real[PATH_MAX], tmp[PATH_MAX + 32], *slash;
	const char *target = path;
	bool existed = false;
	struct stat st;
	int fd, ret;

	hwtel_clear_error();
	/*
	 * -o /dev/stdout and the like: the caller's descriptor gets the text
	 * where it stands (offset, O_APPEND), as a shell's "> /dev/stdout"
	 * does; replacing the file behind it would lose what it held.
	 */
	fd = own_descriptor(path);
	if (fd >= 0) {
		ret = write_all(fd, text, len);
		if (ret)
			return hwtel_err(ret, "cannot write %s: %s", path, strerror(-ret));
		return 0;
	}
	if (stat(path, &st) == 0) {
		if (!S_ISREG(st.st_mode))
			return write_in_place(path, text, len);
		existed = true;
		/* through a symbolic link: the file it names is replaced */
		if (!realpath(path, real))
			return hwtel_err(-errno, "cannot resolve %s: %s", path, strerror(errno));
		target = real;
	} else if (errno != ENOENT) {
		return hwtel_err(-errno, "cannot write %s: %s", path, strerror(errno));
	} else if (lstat(path, &st) == 0) {
		return hwtel_err(-ENOENT, "%s is a symbolic link to nothing: not written", path);
	}

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", target, (long)getpid()) >= (int)sizeof(tmp))
		return hwtel_err(-ENAMETOOLONG, "path too long: %s", target);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return hwtel_err(-errno, "cannot write %s: %s", path, strerror(errno));
	ret = 0;
	/*
	 * The replacement keeps the replaced file's owner (where allowed) and
	 * permission bits: a textfile made 0640 for a reader's group stays so.
	 * No set-id bits.
	 */
	if (existed) {
		if ((st.st_uid != geteuid() || st.st_gid != getegid()) &&
		    fchown(fd, st.st_uid, st.st_gid) < 0 && errno != EPERM)
			ret = -errno;
		if (!ret && fchmod(fd, st.st_mode & 0777) < 0 && errno != EPERM &&
		    errno != EOPNOTSUPP)
			ret = -errno;
	}
	if (!ret)
		ret = write_all(fd, text, len);
	if (!ret && fsync(fd) < 0)
		ret = -errno;
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (ret) {
		unlink(tmp);
		return hwtel_err(ret, "cannot write %s: %s", tmp, strerror(-ret));
	}
	if (rename(tmp, target) < 0) {
		int e = errno;

		unlink(tmp);
		return hwtel_err(-e, "cannot rename %s to %s: %s", tmp, target, strerror(e));
	}
	/* the rename itself on disk: sync the directory (best effort) */
	slash = strrchr(tmp, '/');
	if (slash) {
		*(slash == tmp ? slash + 1 : slash) = '\0';
		fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} else {
		fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	return 0;
}
