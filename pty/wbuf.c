/*
 * wbuf.c: a growable output buffer with little-endian writers, for
 * building wire frames (wire.c). An allocation failure sticks (oom): the
 * writes after it do nothing, and the caller checks once.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pty/pty.h"

void
pty_wbuf_init(struct pty_wbuf *b)
{
	memset(b, 0, sizeof *b);
}

void
pty_wbuf_free(struct pty_wbuf *b)
{
	free(b->buf);
	memset(b, 0, sizeof *b);
}

void
pty_wbuf_reset(struct pty_wbuf *b)
{
	b->len = 0;
	b->oom = false;
}

static bool
wbuf_reserve(struct pty_wbuf *b, size_t n)
{
	size_t ncap;
	uint8_t *nb;

	if (b->oom)
		return false;
	if (b->len + n <= b->cap)
		return true;
	ncap = b->cap ? b->cap : 1024;
	while (ncap < b->len + n)
		ncap *= 2;
	if ((nb = realloc(b->buf, ncap)) == NULL) {
		b->oom = true;
		return false;
	}
	b->buf = nb;
	b->cap = ncap;
	return true;
}

void
pty_wbuf_put(struct pty_wbuf *b, const void *p, size_t n)
{
	if (n == 0 || !wbuf_reserve(b, n))
		return;
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

void
pty_wbuf_u8(struct pty_wbuf *b, uint8_t v)
{
	pty_wbuf_put(b, &v, 1);
}

void
pty_wbuf_u16(struct pty_wbuf *b, uint16_t v)
{
	uint8_t p[2] = { (uint8_t)v, (uint8_t)(v >> 8) };

	pty_wbuf_put(b, p, 2);
}

void
pty_wbuf_u32(struct pty_wbuf *b, uint32_t v)
{
	uint8_t p[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
		(uint8_t)(v >> 24) };

	pty_wbuf_put(b, p, 4);
}

void
pty_wbuf_u64(struct pty_wbuf *b, uint64_t v)
{
	pty_wbuf_u32(b, (uint32_t)v);
	pty_wbuf_u32(b, (uint32_t)(v >> 32));
}
