/*
 * bench_gen.c: writes the deterministic ingest inputs of `make bench`
 * (issue 2 item 5): "agent" output as a coding agent draws it (SGR
 * 16/256/truecolour, CR spinner and progress redraws, a status box erased
 * and redrawn with cursor movement, UTF-8 box drawing) and "plain"
 * scrolling lines. Same bytes on every run (a fixed xorshift seed).
 *
 * usage: bench_gen agent|plain FILE BYTES
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int, char **);

#define COLS 200
#define CHUNK_MAX (64 * 1024)

struct gen {
	uint64_t rng;
	char *buf;	/* the current chunk */
	size_t len;
	unsigned turn;	/* agent turns so far */
	unsigned secs;	/* the fake elapsed time on the spinner */
};

static const char *const words[] = {
	"the", "function", "returns", "a", "pointer", "to", "buffer", "and",
	"we", "need", "check", "whether", "tests", "pass", "after", "change",
	"src/pty/screen.c", "holder", "socket", "frame", "update", "config",
	"error", "handling", "in", "this", "module", "is", "missing", "file",
	"line", "42", "refactor", "the", "loop", "so", "it", "never", "blocks",
	"scrollback", "ring", "cursor", "value", "null", "index", "of", "map",
	"I'll", "read", "let", "me", "look", "at", "now", "run", "build",
};
#define NWORDS (sizeof words / sizeof words[0])

static const char *const spin[] = {
	"\xe2\xa0\x8b", "\xe2\xa0\x99", "\xe2\xa0\xb9", "\xe2\xa0\xb8",
	"\xe2\xa0\xbc", "\xe2\xa0\xb4", "\xe2\xa0\xa6", "\xe2\xa0\xa7",
	"\xe2\xa0\x87", "\xe2\xa0\x8f",
};
#define NSPIN (sizeof spin / sizeof spin[0])

static uint32_t
rnd(struct gen *g, uint32_t n)
{
	g->rng ^= g->rng << 13;
	g->rng ^= g->rng >> 7;
	g->rng ^= g->rng << 17;
	return (uint32_t)(g->rng % n);
}

static void
put(struct gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
put(struct gen *g, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(g->buf + g->len, CHUNK_MAX - g->len, fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < CHUNK_MAX - g->len)
		g->len += (size_t)n;
}

/* UTF-8 for U+2500 box drawing, repeated n times. */
static void
hline(struct gen *g, int n)
{
	for (int i = 0; i < n && g->len + 3 < CHUNK_MAX; i++) {
		memcpy(g->buf + g->len, "\xe2\x94\x80", 3);
		g->len += 3;
	}
}

/* Words until about width columns. */
static int
prose(struct gen *g, int width)
{
	int col = 0;

	while (col < width) {
		const char *w = words[rnd(g, NWORDS)];
		int wl = (int)strlen(w);

		if (rnd(g, 9) == 0) {
			/* inline code, 256-colour */
			put(g, "\x1b[38;5;%um%s\x1b[39m ", 150 + rnd(g, 80), w);
		} else if (rnd(g, 13) == 0) {
			put(g, "\x1b[1m%s\x1b[22m ", w);
		} else {
			put(g, "%s ", w);
		}
		col += wl + 1;
	}
	return col;
}

/* The ink-style status box under the output: 4 lines. */
static void
status_box(struct gen *g)
{
	put(g, "\x1b[38;2;%u;%u;%um\xe2\x95\xad", 100 + rnd(g, 50),
	    100 + rnd(g, 50), 120 + rnd(g, 60));
	hline(g, COLS - 2);
	put(g, "\xe2\x95\xae\x1b[39m\n");
	put(g, "\x1b[38;2;120;120;140m\xe2\x94\x82\x1b[39m \x1b[1m>\x1b[22m ");
	prose(g, 20 + (int)rnd(g, 40));
	put(g, "\x1b[%uG\x1b[38;2;120;120;140m\xe2\x94\x82\x1b[39m\n", COLS);
	put(g, "\x1b[38;2;120;120;140m\xe2\x95\xb0");
	hline(g, COLS - 2);
	put(g, "\xe2\x95\xaf\x1b[39m\n");
	put(g, "  \x1b[2m? for shortcuts\x1b[22m\x1b[%uG\x1b[38;5;%um%u tokens"
	    "\x1b[0m", COLS - 20, 240 + rnd(g, 15), rnd(g, 90000));
}

/* Erase the status box drawn last (the cursor sits on its last line). */
static void
erase_box(struct gen *g)
{
	for (int i = 0; i < 3; i++)
		put(g, "\x1b[2K\x1b[1A");
	put(g, "\x1b[2K\x1b[G");
}

/* A spinner line redrawn in place with CR, then erased. */
static void
spinner(struct gen *g)
{
	unsigned n = 10 + rnd(g, 40), tokens = rnd(g, 5000);

	for (unsigned i = 0; i < n; i++) {
		put(g, "\r\x1b[38;2;215;119;87m%s\x1b[39m \x1b[1mThinking"
		    "\xe2\x80\xa6\x1b[22m \x1b[2m(%us \xc2\xb7 \xe2\x86\x93 %u "
		    "tokens \xc2\xb7 esc to interrupt)\x1b[22m\x1b[K",
		    spin[i % NSPIN], g->secs, tokens);
		tokens += rnd(g, 40);
		if (i % 8 == 7)
			g->secs++;
	}
	put(g, "\r\x1b[2K");
}

/* A progress bar redrawn with CR. */
static void
progress(struct gen *g)
{
	unsigned n = 10 + rnd(g, 30);

	for (unsigned i = 0; i <= n; i++) {
		unsigned fill = i * 40 / n;

		put(g, "\r  \x1b[36mDownloading\x1b[0m \x1b[38;5;208m");
		for (unsigned k = 0; k < 40; k++)
			put(g, "%s", k < fill ? "\xe2\x94\x81" : " ");
		put(g, "\x1b[0m %3u%% \x1b[32m%u.%u MB/s\x1b[0m\x1b[K",
		    i * 100 / n, rnd(g, 90), rnd(g, 10));
	}
	put(g, "\n");
}

/* Assistant prose lines with a truecolour bullet. */
static void
message(struct gen *g)
{
	unsigned n = 1 + rnd(g, 6);

	put(g, "\x1b[38;2;255;255;255m\xe2\x97\x8f\x1b[39m ");
	for (unsigned i = 0; i < n; i++) {
		if (i > 0)
			put(g, "  ");
		prose(g, 60 + (int)rnd(g, 130));
		put(g, "\n");
	}
}

/* A tool call with dimmed output or a coloured diff. */
static void
tool(struct gen *g)
{
	unsigned n = 2 + rnd(g, 12);

	put(g, "\x1b[32m\xe2\x8f\xba\x1b[39m \x1b[1mBash\x1b[22m(make test)"
	    "\n");
	for (unsigned i = 0; i < n; i++) {
		unsigned k = rnd(g, 4);

		put(g, "  %s  ", i == 0 ? "\xe2\x8e\xbf" : " ");
		if (k == 0)
			put(g, "\x1b[32mPASS\x1b[0m tests/pty/test_%s.c\n",
			    words[rnd(g, NWORDS)]);
		else if (k == 1)
			put(g, "\x1b[1;31mFAIL\x1b[0m %s:%u: expected %u\n",
			    words[rnd(g, NWORDS)], rnd(g, 900), rnd(g, 99));
		else if (k == 2) {
			put(g, "\x1b[48;2;%u;%u;%um\x1b[38;5;%um%c ",
			    rnd(g, 2) ? 60 : 20, rnd(g, 2) ? 20 : 60, 30,
			    250 + rnd(g, 5), rnd(g, 2) ? '+' : '-');
			prose(g, 40 + (int)rnd(g, 100));
			put(g, "\x1b[K\x1b[0m\n");
		} else {
			put(g, "\x1b[2m");
			prose(g, 30 + (int)rnd(g, 120));
			put(g, "\x1b[22m\n");
		}
	}
}

/* One agent turn: erase the box, print output, redraw the box. */
static void
agent_turn(struct gen *g)
{
	unsigned k = rnd(g, 10);

	if (g->turn > 0)
		erase_box(g);
	if (k < 3)
		spinner(g);
	else if (k < 4)
		progress(g);
	if (rnd(g, 2))
		message(g);
	else
		tool(g);
	status_box(g);
	g->turn++;
}

static void
plain_line(struct gen *g)
{
	static unsigned long n;

	put(g, "%08lu ", n++);
	for (int col = 9, w = 40 + (int)rnd(g, 140); col < w;) {
		const char *s = words[rnd(g, NWORDS)];

		put(g, "%s ", s);
		col += (int)strlen(s) + 1;
	}
	put(g, "\n");
}

int
main(int argc, char **argv)
{
	struct gen g = { .rng = 0x9e3779b97f4a7c15ull };
	bool agent;
	unsigned long long want, done = 0;
	FILE *f;

	if (argc != 4 || (strcmp(argv[1], "agent") != 0 &&
	    strcmp(argv[1], "plain") != 0)) {
		fprintf(stderr, "usage: bench_gen agent|plain FILE BYTES\n");
		return 2;
	}
	agent = strcmp(argv[1], "agent") == 0;
	want = strtoull(argv[3], NULL, 10);
	if ((g.buf = malloc(CHUNK_MAX)) == NULL ||
	    (f = fopen(argv[2], "wb")) == NULL) {
		fprintf(stderr, "bench_gen: %s: %s\n", argv[2],
		    strerror(errno));
		return 1;
	}
	while (done < want) {
		size_t n;

		g.len = 0;
		if (agent)
			agent_turn(&g);
		else
			plain_line(&g);
		n = g.len;
		if (n > want - done) {
			/* Pad the tail with a plain line of the right size. */
			n = (size_t)(want - done);
			memset(g.buf, 'x', n);
			g.buf[n - 1] = '\n';
		}
		if (fwrite(g.buf, 1, n, f) != n) {
			fprintf(stderr, "bench_gen: write: %s\n",
			    strerror(errno));
			return 1;
		}
		done += n;
	}
	if (fclose(f) != 0) {
		fprintf(stderr, "bench_gen: %s: %s\n", argv[2],
		    strerror(errno));
		return 1;
	}
	free(g.buf);
	return 0;
}
