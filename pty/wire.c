/*
 * wire.c: the framing of the holder socket protocol (SPEC 9.5): a frame
 * decoder that never trusts a length, frame builders (over wbuf.c), and
 * per-type payload validation (over rd.c) shared by both ends and the
 * fuzz target. Frames: u32 little-endian payload length, u8 type, payload.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pty/pty.h"

void
pty_wire_dec_init(struct pty_wire_dec *d, size_t max)
{
	memset(d, 0, sizeof *d);
	d->max = max == 0 || max > PTY_WIRE_MAX ? PTY_WIRE_MAX : max;
}

void
pty_wire_dec_free(struct pty_wire_dec *d)
{
	free(d->buf);
	memset(d, 0, sizeof *d);
}

static uint32_t
get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

/* Drop the frame handed out by the last pty_wire_dec_next. */
static void
drop_pending(struct pty_wire_dec *d)
{
	if (d->pending == 0)
		return;
	assert(d->pending <= d->len);
	memmove(d->buf, d->buf + d->pending, d->len - d->pending);
	d->len -= d->pending;
	d->pending = 0;
}

int
pty_wire_dec_push(struct pty_wire_dec *d, const void *buf, size_t len)
{
	drop_pending(d);
	if (len == 0)
		return 0;
	/* Never hold more than one maximal frame plus one read's worth. */
	if (d->len + len > d->max + PTY_WIRE_HDR + 65536 + len)
		return PTY_ETOOBIG;
	if (d->len + len > d->cap) {
		size_t ncap = d->cap ? d->cap : 4096;
		uint8_t *nb;

		while (ncap < d->len + len)
			ncap *= 2;
		if ((nb = realloc(d->buf, ncap)) == NULL)
			return -ENOMEM;
		d->buf = nb;
		d->cap = ncap;
	}
	memcpy(d->buf + d->len, buf, len);
	d->len += len;
	return 0;
}

int
pty_wire_dec_next(struct pty_wire_dec *d, uint8_t *type,
    const uint8_t **payload, size_t *plen)
{
	uint32_t n;

	drop_pending(d);
	if (d->len < PTY_WIRE_HDR)
		return 0;
	n = get_u32(d->buf);
	if (n > d->max)
		return PTY_ETOOBIG;
	if (d->len < PTY_WIRE_HDR + (size_t)n)
		return 0;
	*type = d->buf[4];
	*plen = n;
	d->pending = PTY_WIRE_HDR + (size_t)n;
	*payload = d->buf + PTY_WIRE_HDR;
	return 1;
}

size_t
pty_wire_begin(struct pty_wbuf *b, uint8_t type)
{
	size_t start = b->len;

	pty_wbuf_u32(b, 0);
	pty_wbuf_u8(b, type);
	return start;
}

void
pty_wire_end(struct pty_wbuf *b, size_t start)
{
	uint32_t n;

	if (b->oom || start + PTY_WIRE_HDR > b->len)
		return;
	n = (uint32_t)(b->len - start - PTY_WIRE_HDR);
	b->buf[start] = (uint8_t)n;
	b->buf[start + 1] = (uint8_t)(n >> 8);
	b->buf[start + 2] = (uint8_t)(n >> 16);
	b->buf[start + 3] = (uint8_t)(n >> 24);
}

void
pty_wire_meta_put(struct pty_wbuf *b, const struct pty_wire_meta *m,
    const char *title)
{
	size_t tl = title ? strlen(title) : 0;

	if (tl > PTY_SCREEN_TITLE_MAX)
		tl = PTY_SCREEN_TITLE_MAX;
	pty_wbuf_u16(b, m->rows);
	pty_wbuf_u16(b, m->cols);
	pty_wbuf_u16(b, m->cur_row);
	pty_wbuf_u16(b, m->cur_col);
	pty_wbuf_u8(b, m->cur_visible);
	pty_wbuf_u8(b, m->cur_blink);
	pty_wbuf_u8(b, m->cur_shape);
	pty_wbuf_u8(b, m->modes);
	pty_wbuf_u8(b, m->mouse);
	pty_wbuf_u8(b, m->state);
	pty_wbuf_u32(b, (uint32_t)m->exit_status);
	pty_wbuf_u64(b, m->bells);
	pty_wbuf_u64(b, m->sb_count);
	pty_wbuf_u16(b, (uint16_t)tl);
	pty_wbuf_put(b, title, tl);
}

int
pty_wire_meta_get(const uint8_t *p, size_t len, struct pty_wire_meta *m,
    char *title, size_t titlesz)
{
	struct pty_rd r;
	const uint8_t *t;

	pty_rd_init(&r, p, len);
	m->rows = pty_rd_u16(&r);
	m->cols = pty_rd_u16(&r);
	m->cur_row = pty_rd_u16(&r);
	m->cur_col = pty_rd_u16(&r);
	m->cur_visible = pty_rd_u8(&r);
	m->cur_blink = pty_rd_u8(&r);
	m->cur_shape = pty_rd_u8(&r);
	m->modes = pty_rd_u8(&r);
	m->mouse = pty_rd_u8(&r);
	m->state = pty_rd_u8(&r);
	m->exit_status = (int32_t)pty_rd_u32(&r);
	m->bells = pty_rd_u64(&r);
	m->sb_count = pty_rd_u64(&r);
	m->title_len = pty_rd_u16(&r);
	if (r.bad || m->title_len > PTY_SCREEN_TITLE_MAX)
		return PTY_EPROTO;
	if ((t = pty_rd_bytes(&r, m->title_len)) == NULL || r.off != len)
		return PTY_EPROTO;
	if (m->rows == 0 || m->cols == 0 || m->rows > 1000 || m->cols > 1000)
		return PTY_EPROTO;
	if (m->state > PTY_RUN_EXITED || m->mouse > PTY_MOUSE_MOVE)
		return PTY_EPROTO;
	if (title != NULL && titlesz > 0) {
		size_t n = m->title_len < titlesz - 1 ? m->title_len :
							  titlesz - 1;
		memcpy(title, t, n);
		title[n] = '\0';
	}
	return 0;
}

static int
check_lines(struct pty_rd *r, uint32_t n)
{
	struct pty_cell *cells;
	int rc = 0;

	if (n > 100000)
		return PTY_EPROTO;
	cells = malloc(sizeof *cells * 1000);
	if (cells == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < n && rc == 0; i++) {
		size_t used = 0;

		if (pty_line_unpack(r->p + r->off, r->len - r->off, cells,
			1000, &used) < 0)
			rc = PTY_EPROTO;
		else
			r->off += used;
	}
	free(cells);
	return rc;
}

int
pty_wire_check(uint8_t type, const uint8_t *p, size_t len)
{
	struct pty_rd r;
	struct pty_wire_meta m;
	uint32_t a, b;

	pty_rd_init(&r, p, len);
	switch (type) {
	case PTY_W_HELLO:
		pty_rd_u32(&r);
		pty_rd_u8(&r);
		break;
	case PTY_W_INPUT:
	case PTY_W_PASTE:
		return 0;
	case PTY_W_KEY:
		a = pty_rd_u32(&r);
		pty_rd_u32(&r);
		if (a == PTY_KEY_NONE || a >= PTY_KEY_MAX)
			return PTY_EPROTO;
		break;
	case PTY_W_UNICHAR:
		a = pty_rd_u32(&r);
		pty_rd_u32(&r);
		if (a == 0 || a > 0x10ffff)
			return PTY_EPROTO;
		break;
	case PTY_W_RESIZE:
		a = pty_rd_u16(&r);
		b = pty_rd_u16(&r);
		if (a == 0 || b == 0 || a > 1000 || b > 1000)
			return PTY_EPROTO;
		break;
	case PTY_W_SIGNAL:
		pty_rd_u8(&r);
		break;
	case PTY_W_CANCEL:
		break;
	case PTY_W_STATUS:
	case PTY_W_OK:
		pty_rd_u32(&r);
		break;
	case PTY_W_SCROLLBACK:
		pty_rd_u32(&r);
		pty_rd_u32(&r);
		break;
	case PTY_W_ANSWER:
		pty_rd_u64(&r);
		if (len > 8 + PTY_DIALOG_ANSWER_MAX || len == 8)
			return PTY_EPROTO;
		return r.bad ? PTY_EPROTO : 0;
	case PTY_W_STATUS_REPLY:
		pty_rd_u32(&r);
		return r.bad ? PTY_EPROTO : 0;
	case PTY_W_META:
		return pty_wire_meta_get(p, len, &m, NULL, 0);
	case PTY_W_ROWS:
		a = pty_rd_u16(&r);
		b = pty_rd_u16(&r);
		if (r.bad || a + b > 1000)
			return PTY_EPROTO;
		if (check_lines(&r, b) < 0)
			return PTY_EPROTO;
		break;
	case PTY_W_SB_LINES:
		pty_rd_u32(&r);
		pty_rd_u32(&r);
		b = pty_rd_u32(&r);
		if (r.bad || check_lines(&r, b) < 0)
			return PTY_EPROTO;
		break;
	case PTY_W_EXIT:
		pty_rd_u32(&r);
		break;
	case PTY_W_ERROR:
		pty_rd_u32(&r);
		return r.bad ? PTY_EPROTO : 0;
	default:
		return PTY_EPROTO;
	}
	return r.bad || r.off != len ? PTY_EPROTO : 0;
}
