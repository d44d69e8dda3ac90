/*
 * id.c: lease IDs (SPEC 2): "YYYYMMDD-HHMMSS-mmm-xxxx" in UTC with 16 random
 * bits, so they sort by time as plain strings and never contain a path or
 * pattern character. Validation is exact; every entry point checks it.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "lease/lease.h"

int
lease_id_format(char out[LEASE_ID_LEN + 1], int64_t ms, uint16_t rnd)
{
	struct tm tm;
	time_t secs;
	int n;

	assert(out != NULL);
	/* 253402300800 s is 10000-01-01T00:00:00Z. */
	if (ms < 0 || ms / 1000 >= 253402300800LL)
		return -EINVAL;
	secs = (time_t)(ms / 1000);
	if (gmtime_r(&secs, &tm) == NULL)
		return -EINVAL;
	n = snprintf(out, LEASE_ID_LEN + 1,
	    "%04d%02d%02d-%02d%02d%02d-%03d-%04x", tm.tm_year + 1900,
	    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
	    (int)(ms % 1000), (unsigned)rnd);
	if (n != LEASE_ID_LEN)
		return -EINVAL;
	return 0;
}

int
lease_id_new(char out[LEASE_ID_LEN + 1])
{
	unsigned char r[2];
	ssize_t got;

	assert(out != NULL);
	do
		got = getrandom(r, sizeof r, 0);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return -errno;
	if (got != (ssize_t)sizeof r)
		return -EIO;
	return lease_id_format(out, lease_id_now_ms(),
	    (uint16_t)(r[0] << 8 | r[1]));
}

/* Parse n decimal digits at s into *v; false if any is not a digit. */
static bool
digits(const char *s, int n, int *v)
{
	int i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		*v = *v * 10 + (s[i] - '0');
	}
	return true;
}

static int
days_in_month(int y, int m)
{
	static const int days[12] = {
		31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31
	};
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : days[m - 1];
}

bool
lease_id_valid(const char *s)
{
	int y, mo, d, h, mi, se, ms, i;

	if (s == NULL || strlen(s) != LEASE_ID_LEN)
		return false;
	if (s[8] != '-' || s[15] != '-' || s[19] != '-')
		return false;
	if (!digits(s, 4, &y) || !digits(s + 4, 2, &mo) ||
	    !digits(s + 6, 2, &d) || !digits(s + 9, 2, &h) ||
	    !digits(s + 11, 2, &mi) || !digits(s + 13, 2, &se) ||
	    !digits(s + 16, 3, &ms))
		return false;
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 ||
	    d > days_in_month(y, mo) || h > 23 || mi > 59 || se > 59)
		return false;
	(void)ms;
	for (i = 20; i < LEASE_ID_LEN; i++) {
		char c = s[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
	}
	return true;
}

/* A run of 1..max decimal digits at *p, ending at a '.' or the end. */
static const char *
digit_run(const char *p, size_t max)
{
	size_t n = 0;

	while (p[n] >= '0' && p[n] <= '9' && n <= max)
		n++;
	return n == 0 || n > max ? NULL : p + n;
}

bool
lease_id_run_valid(const char *s, char lease[LEASE_ID_LEN + 1])
{
	char id[LEASE_ID_LEN + 1];
	const char *p;

	if (s == NULL || strnlen(s, LEASE_ID_LEN + 1) <= LEASE_ID_LEN ||
	    s[LEASE_ID_LEN] != '.')
		return false;
	memcpy(id, s, LEASE_ID_LEN);
	id[LEASE_ID_LEN] = '\0';
	if (!lease_id_valid(id))
		return false;
	if ((p = digit_run(s + LEASE_ID_LEN + 1, 19)) == NULL || *p != '.' ||
	    (p = digit_run(p + 1, 10)) == NULL || *p != '\0')
		return false;
	if (lease != NULL)
		memcpy(lease, id, LEASE_ID_LEN + 1);
	return true;
}

int
lease_id_branch(char out[LEASE_BRANCH_LEN + 1], const char *id)
{
	assert(out != NULL);
	if (!lease_id_valid(id))
		return LEASE_EBADID;
	memcpy(out, LEASE_BRANCH_PREFIX, 7);
	memcpy(out + 7, id, LEASE_ID_LEN + 1);
	return 0;
}

int64_t
lease_id_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t
lease_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}
