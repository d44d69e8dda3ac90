/*
 * holder_client.c: the blocking client side of a holder socket, for one-shot
 * commands (`corral screen`, `send`, `cancel`, `ls`) and tests. Every call
 * has a deadline, so a dead or wedged holder can never hang a command
 * (SPEC 9.2). The console uses the same frames through libuv.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "pty/pty.h"

struct pty_holder_client {
	int fd;
	struct pty_wire_dec dec;
	struct pty_wbuf wb;
	uint32_t seq;
};

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* connect(2) on a path that may be longer than sun_path allows. */
static int
connect_path(int fd, const char *path)
{
	struct sockaddr_un sa;
	char *dir = NULL, *slash;
	int dfd = -1, rc;

	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	if (strlen(path) < sizeof sa.sun_path) {
		strcpy(sa.sun_path, path);
	} else {
		if ((dir = strdup(path)) == NULL)
			return -ENOMEM;
		if ((slash = strrchr(dir, '/')) == NULL) {
			free(dir);
			return -ENAMETOOLONG;
		}
		*slash = '\0';
		dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		free(dir);
		if (dfd < 0)
			return -errno;
		snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/%s",
		    dfd, strrchr(path, '/') + 1);
	}
	rc = connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ? -errno : 0;
	if (dfd >= 0)
		close(dfd);
	return rc;
}

static int
wait_fd(int fd, short ev, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = ev };
	int64_t left;
	int n;

	for (;;) {
		left = deadline - mono_ms();
		if (left < 0)
			left = 0;
		n = poll(&p, 1, (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return PTY_ETIMEDOUT;
		return 0;
	}
}

static int
send_all(int fd, const uint8_t *p, size_t len, int64_t deadline)
{
	ssize_t w;
	int rc;

	while (len > 0) {
		w = send(fd, p, len, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if ((rc = wait_fd(fd, POLLOUT, deadline)) < 0)
				return rc;
			continue;
		}
		if (w < 0)
			return errno == EPIPE ? PTY_ECLOSED : -errno;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int
pty_holder_client_open(struct pty_holder_client **out, const char *path,
    unsigned flags, int timeout_ms)
{
	struct pty_holder_client *c;
	uint8_t hello[5];
	int rc;

	if (out == NULL || path == NULL)
		return -EINVAL;
	if ((c = calloc(1, sizeof *c)) == NULL)
		return -ENOMEM;
	pty_wire_dec_init(&c->dec, PTY_WIRE_MAX);
	pty_wbuf_init(&c->wb);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (c->fd < 0) {
		rc = -errno;
		goto fail;
	}
	rc = connect_path(c->fd, path);
	if (rc == -EINPROGRESS || rc == -EAGAIN) {
		int err = 0;
		socklen_t el = sizeof err;

		if ((rc = wait_fd(c->fd, POLLOUT, mono_ms() + timeout_ms)) < 0)
			goto fail;
		getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el);
		rc = -err;
	}
	if (rc < 0)
		goto fail;
	hello[0] = PTY_WIRE_VERSION;
	hello[1] = hello[2] = hello[3] = 0;
	hello[4] = (uint8_t)flags;
	if ((rc = pty_holder_client_send(c, PTY_W_HELLO, hello,
	    sizeof hello)) < 0)
		goto fail;
	(void)timeout_ms;
	*out = c;
	return 0;
fail:
	pty_holder_client_free(c);
	return rc;
}

void
pty_holder_client_free(struct pty_holder_client *c)
{
	if (c == NULL)
		return;
	if (c->fd >= 0)
		close(c->fd);
	pty_wire_dec_free(&c->dec);
	pty_wbuf_free(&c->wb);
	free(c);
}

int
pty_holder_client_fd(const struct pty_holder_client *c)
{
	return c->fd;
}

int
pty_holder_client_send(struct pty_holder_client *c, uint8_t type,
    const void *payload, size_t len)
{
	size_t st;

	if (c == NULL || len > PTY_WIRE_MAX)
		return -EINVAL;
	pty_wbuf_reset(&c->wb);
	st = pty_wire_begin(&c->wb, type);
	pty_wbuf_put(&c->wb, payload, len);
	pty_wire_end(&c->wb, st);
	if (c->wb.oom)
		return -ENOMEM;
	return send_all(c->fd, c->wb.buf, c->wb.len, mono_ms() + 5000);
}

int
pty_holder_client_recv(struct pty_holder_client *c, uint8_t *type,
    const uint8_t **payload, size_t *plen, int timeout_ms)
{
	int64_t deadline = mono_ms() + timeout_ms;
	uint8_t buf[65536];
	ssize_t n;
	int rc;

	for (;;) {
		rc = pty_wire_dec_next(&c->dec, type, payload, plen);
		if (rc != 0)
			return rc;
		if ((rc = wait_fd(c->fd, POLLIN, deadline)) < 0)
			return rc == PTY_ETIMEDOUT ? 0 : rc;
		n = recv(c->fd, buf, sizeof buf, 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return PTY_ECLOSED;
		if ((rc = pty_wire_dec_push(&c->dec, buf, (size_t)n)) < 0)
			return rc;
	}
}

char *
pty_holder_client_status(struct pty_holder_client *c, int timeout_ms, int *err)
{
	uint32_t seq = ++c->seq;
	uint8_t req[4] = { (uint8_t)seq, (uint8_t)(seq >> 8),
		(uint8_t)(seq >> 16), (uint8_t)(seq >> 24) };
	int64_t deadline = mono_ms() + timeout_ms;
	const uint8_t *p;
	size_t len;
	uint8_t type;
	char *s;
	int rc;

	*err = 0;
	if ((rc = pty_holder_client_send(c, PTY_W_STATUS, req,
	    sizeof req)) < 0) {
		*err = rc;
		return NULL;
	}
	for (;;) {
		int64_t left = deadline - mono_ms();

		rc = pty_holder_client_recv(c, &type, &p, &len,
		    left > 0 ? (int)left : 0);
		if (rc == 0) {
			*err = PTY_ETIMEDOUT;
			return NULL;
		}
		if (rc < 0) {
			*err = rc;
			return NULL;
		}
		if (type != PTY_W_STATUS_REPLY || len < 4)
			continue;
		if ((s = malloc(len - 4 + 1)) == NULL) {
			*err = -ENOMEM;
			return NULL;
		}
		memcpy(s, p + 4, len - 4);
		s[len - 4] = '\0';
		return s;
	}
}
