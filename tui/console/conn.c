/*
 * conn.c: the console's asynchronous client of a holder socket (SPEC 9.5)
 * on its libuv loop: connect with a deadline, HELLO, frames decoded and
 * validated (pty_wire_check) before anyone sees them, a capped write
 * queue. Unlike pty/holder_client.c nothing here blocks: a dead or wedged
 * holder comes back as TUI_CONN_DOWN with a reason, never as a hang.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>
#include <uv.h>

#include "lease/lease.h"
#include "pty/pty.h"
#include "tui/console/console_int.h"

#define CONN_READ_BUF 32768

struct tui_conn {
	uv_pipe_t pipe;
	uv_timer_t deadline;
	uv_connect_t creq;
	struct pty_wire_dec dec;
	tui_conn_cb cb;
	void *ud;
	char id[LEASE_ID_LEN + 1];
	unsigned flags;
	unsigned deadline_ms;
	int dirfd;		/* held open for a /proc/self/fd path */
	int handles;		/* open libuv handles */
	bool up, answered, closing;
	char rbuf[CONN_READ_BUF];
};

struct conn_write {
	uv_write_t req;
	uint8_t data[];
};

static void
conn_handle_closed(uv_handle_t *h)
{
	struct tui_conn *c = h->data;

	if (--c->handles > 0)
		return;
	pty_wire_dec_free(&c->dec);
	if (c->dirfd >= 0)
		close(c->dirfd);
	free(c);
}

void
tui_conn_close(struct tui_conn *c)
{
	if (c == NULL || c->closing)
		return;
	c->closing = true;
	uv_close((uv_handle_t *)&c->deadline, conn_handle_closed);
	uv_close((uv_handle_t *)&c->pipe, conn_handle_closed);
}

/* Report DOWN once, then close. */
static void
conn_down(struct tui_conn *c, int err)
{
	if (c->closing)
		return;
	c->cb(c, TUI_CONN_DOWN, 0, NULL, 0, err, c->ud);
	tui_conn_close(c);
}

static void
conn_deadline_cb(uv_timer_t *t)
{
	struct tui_conn *c = t->data;

	if (!c->answered)
		conn_down(c, PTY_ETIMEDOUT);
}

static void
conn_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
	struct tui_conn *c = h->data;

	(void)hint;
	b->base = c->rbuf;
	b->len = sizeof c->rbuf;
}

static void
conn_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct tui_conn *c = s->data;
	const uint8_t *p;
	size_t plen;
	uint8_t type;
	int rc;

	if (c->closing)
		return;
	if (n < 0) {
		conn_down(c, n == UV_EOF ? PTY_ECLOSED : (int)n);
		return;
	}
	if (n == 0)
		return;
	if ((rc = pty_wire_dec_push(&c->dec, b->base, (size_t)n)) < 0) {
		conn_down(c, rc);
		return;
	}
	while (!c->closing &&
	    (rc = pty_wire_dec_next(&c->dec, &type, &p, &plen)) == 1) {
		/* Untrusted bytes: every payload is checked for its type. */
		if (type < PTY_W_STATUS_REPLY ||
		    pty_wire_check(type, p, plen) < 0) {
			conn_down(c, PTY_EPROTO);
			return;
		}
		if (!c->answered) {
			c->answered = true;
			uv_timer_stop(&c->deadline);
		}
		c->cb(c, TUI_CONN_FRAME, type, p, plen, 0, c->ud);
	}
	if (rc < 0)
		conn_down(c, rc);
}

static void
conn_connected(uv_connect_t *req, int status)
{
	struct tui_conn *c = req->data;
	uint8_t hello[5];
	int rc;

	if (c->dirfd >= 0) {
		close(c->dirfd);
		c->dirfd = -1;
	}
	if (c->closing)
		return;
	if (status < 0) {
		conn_down(c, status);
		return;
	}
	c->up = true;
	hello[0] = PTY_WIRE_VERSION & 0xff;
	hello[1] = (PTY_WIRE_VERSION >> 8) & 0xff;
	hello[2] = (PTY_WIRE_VERSION >> 16) & 0xff;
	hello[3] = (PTY_WIRE_VERSION >> 24) & 0xff;
	hello[4] = (uint8_t)c->flags;
	if ((rc = tui_conn_send(c, PTY_W_HELLO, hello, sizeof hello)) < 0 ||
	    (rc = uv_read_start((uv_stream_t *)&c->pipe, conn_alloc,
	    conn_read)) < 0) {
		conn_down(c, rc);
		return;
	}
	c->cb(c, TUI_CONN_UP, 0, NULL, 0, 0, c->ud);
}

int
tui_conn_open(struct tui_conn **out, uv_loop_t *loop, const char *path,
    const char *id, unsigned flags, unsigned deadline_ms, tui_conn_cb cb,
    void *ud)
{
	struct sockaddr_un sa;
	struct tui_conn *c;
	char shortpath[sizeof sa.sun_path];
	const char *target = path;

	assert(out != NULL && loop != NULL && path != NULL && cb != NULL);
	*out = NULL;
	if ((c = calloc(1, sizeof *c)) == NULL)
		return -ENOMEM;
	c->dirfd = -1;
	if (strlen(path) >= sizeof sa.sun_path) {
		/* A deep state directory: reach the socket through its dir. */
		char *dir = strdup(path), *slash;

		if (dir == NULL || (slash = strrchr(dir, '/')) == NULL) {
			free(dir);
			free(c);
			return dir == NULL ? -ENOMEM : -ENAMETOOLONG;
		}
		*slash = '\0';
		c->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		free(dir);
		if (c->dirfd < 0 || snprintf(shortpath, sizeof shortpath,
		    "/proc/self/fd/%d/%s", c->dirfd, strrchr(path, '/') + 1) >=
		    (int)sizeof shortpath) {
			if (c->dirfd >= 0)
				close(c->dirfd);
			free(c);
			return -ENAMETOOLONG;
		}
		target = shortpath;
	}
	snprintf(c->id, sizeof c->id, "%s", id != NULL ? id : "");
	c->cb = cb;
	c->ud = ud;
	c->flags = flags;
	c->deadline_ms = deadline_ms;
	pty_wire_dec_init(&c->dec, PTY_WIRE_MAX);
	uv_pipe_init(loop, &c->pipe, 0);
	uv_timer_init(loop, &c->deadline);
	c->handles = 2;
	c->pipe.data = c->deadline.data = c->creq.data = c;
	uv_timer_start(&c->deadline, conn_deadline_cb, deadline_ms, 0);
	/* Errors, even immediate ones, arrive in conn_connected. */
	uv_pipe_connect(&c->creq, &c->pipe, target, conn_connected);
	*out = c;
	return 0;
}

const char *
tui_conn_id(const struct tui_conn *c)
{
	return c->id;
}

bool
tui_conn_is_up(const struct tui_conn *c)
{
	return c != NULL && c->up && !c->closing;
}

static void
conn_write_done(uv_write_t *req, int status)
{
	(void)status;	/* a failed write shows up as a read error */
	free(req);
}

int
tui_conn_send(struct tui_conn *c, uint8_t type, const void *p, size_t len)
{
	struct conn_write *w;
	uv_buf_t b;
	int rc;

	assert(c != NULL && (p != NULL || len == 0));
	if (!c->up || c->closing)
		return -ENOTCONN;
	if (len > PTY_WIRE_MAX)
		return PTY_ETOOBIG;
	if (uv_stream_get_write_queue_size((uv_stream_t *)&c->pipe) >
	    TUI_CONN_QUEUE_MAX)
		return -ENOBUFS;
	if ((w = malloc(sizeof *w + PTY_WIRE_HDR + len)) == NULL)
		return -ENOMEM;
	w->data[0] = (uint8_t)len;
	w->data[1] = (uint8_t)(len >> 8);
	w->data[2] = (uint8_t)(len >> 16);
	w->data[3] = (uint8_t)(len >> 24);
	w->data[4] = type;
	if (len > 0)
		memcpy(w->data + PTY_WIRE_HDR, p, len);
	b = uv_buf_init((char *)w->data, (unsigned)(PTY_WIRE_HDR + len));
	/*
	 * Nothing queued: written at once, with no request for the loop to
	 * finish (a keystroke reaches its holder in one call; issue 17).
	 * What a full socket leaves goes through the queue, in order.
	 */
	if ((rc = uv_try_write((uv_stream_t *)&c->pipe, &b, 1)) !=
	    UV_EAGAIN) {
		if (rc < 0) {
			free(w);
			return rc;
		}
		if ((size_t)rc == b.len) {
			free(w);
			return 0;
		}
		b.base += rc;
		b.len -= (size_t)rc;
	}
	if ((rc = uv_write(&w->req, (uv_stream_t *)&c->pipe, &b, 1,
	    conn_write_done)) < 0) {
		free(w);
		return rc;
	}
	return 0;
}

void
tui_conn_reason(int err, unsigned deadline_ms, char *buf, size_t bufsz)
{
	switch (err) {
	case PTY_ETIMEDOUT:
		snprintf(buf, bufsz, "holder did not answer within %u ms",
		    deadline_ms);
		break;
	case PTY_ECLOSED:
		snprintf(buf, bufsz, "holder closed the connection");
		break;
	case PTY_EPROTO:
	case PTY_ETOOBIG:
		snprintf(buf, bufsz, "holder sent a malformed frame");
		break;
	case UV_ENOENT:
		snprintf(buf, bufsz, "holder socket is gone");
		break;
	case UV_ECONNREFUSED:
		snprintf(buf, bufsz, "holder socket refuses connections");
		break;
	case UV_EAGAIN:
		snprintf(buf, bufsz, "holder is not accepting connections");
		break;
	default:
		snprintf(buf, bufsz, "holder socket: %s",
		    err > PTY_EBASE && err < PTY_EBASE + 100 ?
		    pty_strerror(err) : uv_strerror(err));
		break;
	}
}
