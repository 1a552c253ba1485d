// SPDX-License-Identifier: GPL-2.0
/*
 * kmsg_follow: copy every kernel log record to standard output as it is
 * logged, from the oldest record the ring still holds, until killed.
 *
 * selftests/run_in_vm runs it in the background for the whole guest and
 * finds each program's window between two marker records it writes to
 * /dev/kmsg. A reader of /dev/kmsg has its own position, so clearing the ring and
 * a full ring change nothing for it. Should it fall behind by more than the
 * ring holds, read() fails with EPIPE; it then prints a line starting
 * "hwtel-kmsg: lost" (which fails the program whose window holds it) and
 * goes on from the oldest record left.
 *
 * Output: one line per record, the message text after the record header
 * ("prio,seq,usec,flags;"), with the header's sequence number first:
 * "SEQ TEXT". Continuation lines (" KEY=value") are dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	static char rec[16384];
	int fd = open("/dev/kmsg", O_RDONLY);

	if (fd < 0) {
		perror("kmsg_follow: /dev/kmsg");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (;;) {
		unsigned long long seq;
		char *text, *nl;
		ssize_t n = read(fd, rec, sizeof(rec) - 1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EPIPE) {
				printf("hwtel-kmsg: lost records (the ring overran the reader)\n");
				continue;
			}
			perror("kmsg_follow: read");
			return 1;
		}
		rec[n] = '\0';
		text = strchr(rec, ';');
		if (!text || sscanf(rec, "%*u,%llu,", &seq) != 1)
			continue;
		text++;
		nl = strchr(text, '\n');
		if (nl)
			*nl = '\0';
		printf("%llu %s\n", seq, text);
	}
}
