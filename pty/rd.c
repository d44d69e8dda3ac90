/*
 * rd.c: a bounds-checked little-endian reader over untrusted bytes (wire
 * payloads, SPEC 9.5): a read past the end returns 0 and marks the reader
 * bad, so a parser checks once at its end.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pty/pty.h"

void
pty_rd_init(struct pty_rd *r, const uint8_t *p, size_t len)
{
	r->p = p;
	r->len = len;
	r->off = 0;
	r->bad = false;
}

const uint8_t *
pty_rd_bytes(struct pty_rd *r, size_t n)
{
	const uint8_t *p;

	if (r->bad || n > r->len - r->off) {
		r->bad = true;
		return NULL;
	}
	p = r->p + r->off;
	r->off += n;
	return p;
}

uint8_t
pty_rd_u8(struct pty_rd *r)
{
	const uint8_t *p = pty_rd_bytes(r, 1);

	return p ? p[0] : 0;
}

uint16_t
pty_rd_u16(struct pty_rd *r)
{
	const uint8_t *p = pty_rd_bytes(r, 2);

	return p ? (uint16_t)(p[0] | p[1] << 8) : 0;
}

uint32_t
pty_rd_u32(struct pty_rd *r)
{
	const uint8_t *p = pty_rd_bytes(r, 4);

	return p ? (uint32_t)p[0] | (uint32_t)p[1] << 8 |
	    (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24 : 0;
}

uint64_t
pty_rd_u64(struct pty_rd *r)
{
	uint64_t lo = pty_rd_u32(r);

	return lo | (uint64_t)pty_rd_u32(r) << 32;
}
