/*
 * proc.c: process facts for holder probes (SPEC 9.2): a PID is only the
 * holder it was if it also started at the recorded time, so a reused PID
 * is never mistaken for a live holder. Linux /proc only.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease/lease.h"

/* Field 3 (state) and field 22 (starttime) of /proc/<pid>/stat. */
static int
read_stat(pid_t pid, char *state, int64_t *start)
{
	char path[64], buf[1024], *p, *tok, *save = NULL;
	size_t n;
	FILE *f;
	int field;

	if (pid <= 0)
		return -ESRCH;
	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if ((f = fopen(path, "re")) == NULL)
		return errno == ENOENT ? -ESRCH : -errno;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* the command name may hold spaces and ')': skip to the last ')' */
	if ((p = strrchr(buf, ')')) == NULL)
		return -EIO;
	field = 3;
	for (tok = strtok_r(p + 1, " ", &save); tok != NULL;
	    tok = strtok_r(NULL, " ", &save), field++) {
		if (field == 3)
			*state = tok[0];
		if (field == 22) {
			*start = strtoll(tok, NULL, 10);
			return 0;
		}
	}
	return -EIO;
}

int
lease_proc_start(pid_t pid, int64_t *start)
{
	char state;

	assert(start != NULL);
	return read_stat(pid, &state, start);
}

bool
lease_proc_alive(pid_t pid, int64_t start)
{
	int64_t now_start;
	char state = '?';

	if (read_stat(pid, &state, &now_start) < 0)
		return false;
	return state != 'Z' && state != 'X' && now_start == start;
}
