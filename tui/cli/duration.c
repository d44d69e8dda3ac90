/*
 * duration.c: parse durations for the command line ("90", "30s", "10m",
 * "2h", "1d", "1h30m"): seconds by default, strictly checked.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "tui/cli/cli.h"

int
tui_duration_parse(const char *s, int64_t *ms)
{
	int64_t total = 0;

	if (s == NULL || *s == '\0')
		return -EINVAL;
	while (*s != '\0') {
		char *end;
		long long v;
		int64_t unit = 1000;

		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		errno = 0;
		v = strtoll(s, &end, 10);
		if (errno != 0 || v < 0 || v > 100000000LL)
			return -EINVAL;
		switch (*end) {
		case 's': unit = 1000; end++; break;
		case 'm': unit = 60000; end++; break;
		case 'h': unit = 3600000; end++; break;
		case 'd': unit = 86400000; end++; break;
		case '\0': break;
		default: return -EINVAL;
		}
		total += (int64_t)v * unit;
		s = end;
	}
	*ms = total;
	return 0;
}
