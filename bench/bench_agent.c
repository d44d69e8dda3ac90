/*
 * bench_agent.c: the endpoint programs `make bench` runs, the same under a
 * holder and in a tmux pane:
 *   tick SECONDS IDLE   a coloured line every millisecond for SECONDS,
 *                       then IDLE seconds of silence, then exit 0
 *   lines N DONEFILE [read|pause]
 *                       N coloured lines, then a cursor position request
 *                       (DSR 6): its reply proves the terminal has parsed
 *                       every line; then create DONEFILE and wait forever,
 *                       in a read of the terminal (an idle CLI or shell,
 *                       the default) or in pause() (like an agent asleep
 *                       in epoll)
 *   echo                raw mode, print "echo-ready", then write back
 *                       every byte read (keystroke round trips)
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

int main(int, char **);

static const char *const words[] = {
	"build", "holder", "screen", "frame", "cursor", "socket", "update",
	"tests", "passed", "in", "the", "module", "src/main.c", "value", "ok",
	"reading", "writing", "diff", "patch", "agent", "lease", "42", "and",
};
#define NWORDS (sizeof words / sizeof words[0])

static void
write_all(const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(1, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			exit(1);
		p += w;
		n -= (size_t)w;
	}
}

static uint32_t
rnd(uint64_t *s, uint32_t n)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (uint32_t)(*s % n);
}

/* One line of 30..190 columns with 16, 256 and truecolour spans. */
static size_t
colour_line(char *buf, size_t sz, uint64_t *s)
{
	size_t len = 0;
	int width = 30 + (int)rnd(s, 160), col = 0;

	while (col < width && len + 64 < sz) {
		const char *w = words[rnd(s, NWORDS)];
		int n;

		switch (rnd(s, 6)) {
		case 0:
			n = snprintf(buf + len, sz - len,
			    "\x1b[3%um%s\x1b[39m ", 1 + rnd(s, 7), w);
			break;
		case 1:
			n = snprintf(buf + len, sz - len,
			    "\x1b[38;5;%um%s\x1b[39m ", 16 + rnd(s, 230), w);
			break;
		case 2:
			n = snprintf(buf + len, sz - len,
			    "\x1b[38;2;%u;%u;%um%s\x1b[39m ", rnd(s, 256),
			    rnd(s, 256), rnd(s, 256), w);
			break;
		default:
			n = snprintf(buf + len, sz - len, "%s ", w);
			break;
		}
		if (n < 0 || (size_t)n >= sz - len)
			break;
		len += (size_t)n;
		col += (int)strlen(w) + 1;
	}
	buf[len++] = '\n';
	return len;
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int
tick(double seconds, double idle)
{
	uint64_t start = mono_ns(), next = start, end;
	uint64_t s = 0x2545f4914f6cdd1dull ^ (uint64_t)getpid();
	char buf[256];
	unsigned n = 0;

	end = start + (uint64_t)(seconds * 1e9);
	while (mono_ns() < end) {
		struct timespec ts;
		int len = snprintf(buf, sizeof buf,
		    "\x1b[38;5;%um%8u\x1b[0m tick \x1b[1;3%umworker\x1b[0m "
		    "processed item %u of the queue: \x1b[32mok\x1b[0m\n",
		    16 + rnd(&s, 230), n, 1 + rnd(&s, 7), rnd(&s, 100000));

		write_all(buf, (size_t)len);
		n++;
		next += 1000000u;
		if (mono_ns() > next + 50000000u)
			next = mono_ns(); /* fell far behind: do not burst */
		ts.tv_sec = (time_t)(next / 1000000000u);
		ts.tv_nsec = (long)(next % 1000000000u);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
		    NULL) == EINTR)
			;
	}
	if (idle > 0) {
		struct timespec ts = { .tv_sec = (time_t)idle,
			.tv_nsec = (long)((idle - (double)(time_t)idle) *
			    1e9) };
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	return 0;
}

static int
lines(long n, const char *done, bool in_read)
{
	uint64_t s = 0x9e3779b97f4a7c15ull;
	struct termios t;
	char buf[4096];
	struct pollfd p = { .fd = 0, .events = POLLIN };
	int fd;

	/* No echo, no line buffering: the DSR reply comes back raw. */
	if (tcgetattr(0, &t) == 0) {
		t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		t.c_cc[VMIN] = 1;
		t.c_cc[VTIME] = 0;
		tcsetattr(0, TCSANOW, &t);
	}
	for (long i = 0; i < n; i++)
		write_all(buf, colour_line(buf, sizeof buf, &s));
	write_all("\x1b[6n", 4);
	for (;;) {
		ssize_t r;

		if (poll(&p, 1, 30000) <= 0)
			return 1;
		r = read(0, buf, sizeof buf);
		if (r <= 0)
			return 1;
		if (memchr(buf, 'R', (size_t)r) != NULL)
			break;
	}
	if ((fd = open(done, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) < 0)
		return 1;
	close(fd);
	while (in_read) {
		ssize_t r = read(0, buf, sizeof buf);

		if (r == 0 || (r < 0 && errno != EINTR))
			return 0;
	}
	for (;;)
		pause();
}

static int
echo(void)
{
	struct termios t;
	char buf[256];
	ssize_t n;

	if (tcgetattr(0, &t) == 0) {
		cfmakeraw(&t);
		tcsetattr(0, TCSANOW, &t);
	}
	write_all("echo-ready\r\n", 12);
	for (;;) {
		n = read(0, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		write_all(buf, (size_t)n);
	}
}

int
main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "tick") == 0)
		return tick(atof(argv[2]), atof(argv[3]));
	if ((argc == 4 || argc == 5) && strcmp(argv[1], "lines") == 0)
		return lines(atol(argv[2]), argv[3],
		    argc == 4 || strcmp(argv[4], "pause") != 0);
	if (argc == 2 && strcmp(argv[1], "echo") == 0)
		return echo();
	fprintf(stderr, "usage: bench_agent tick SECONDS IDLE | "
	    "lines N DONEFILE [read|pause] | echo\n");
	return 2;
}
