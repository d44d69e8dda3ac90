/*
 * sbx_forward.c: the egress forwarder of corral-sbx-init (SPEC 8.2;
 * SANDBOX.md 5.b). Inside the agent zone's own network namespace it
 * listens on 127.0.0.1:3128 and pipes each connection, byte for byte, to
 * the lease proxy's unix socket bound into the zone; the proxy decides.
 * With a loopback grant it also listens on 127.0.0.1:PORT and opens each
 * connection with "CONNECT localhost:PORT" first. With a model gateway
 * (SPEC 8.5) it listens on 127.0.0.1:3129 too and pipes each of those
 * connections to the gateway's socket, which reads the HTTP itself. One
 * poll loop, fixed buffers, until the agent exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sbx_forward.h"

#ifdef __SANITIZE_ADDRESS__
/*
 * Sanitized builds: LeakSanitizer stops threads with ptrace, which the
 * zone's seccomp filter denies, and would turn every exit of the helper
 * into a failure. Leaks of this short-lived helper are not checked.
 */
const char *__asan_default_options(void);

const char *
__asan_default_options(void)
{
	return "detect_leaks=0";
}
#endif

#define FWD_MAX_CONNS 64
#define FWD_BUF 16384

struct dir {
	char buf[FWD_BUF];
	size_t len, off;	/* bytes held; bytes already written */
};

struct conn {
	int cfd, ufd;
	struct dir cu;		/* client to upstream */
	struct dir uc;		/* upstream to client */
	bool c_eof, u_eof;	/* read side ended */
	bool u_shut, c_shut;	/* write side shut */
	bool await;		/* waiting for the proxy's 200 */
	bool dead;
};

int
sbx_forward_listen(unsigned port)
{
	struct sockaddr_in a;
	int fd, one = 1;

	if (port == 0 || port > 65535)
		return -EINVAL;
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons((unsigned short)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
	    listen(fd, 64) < 0) {
		int err = errno;

		close(fd);
		return -err;
	}
	return fd;
}

static int
dial_proxy(const char *sock)
{
	struct sockaddr_un a;
	int fd;

	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	if (strlen(sock) >= sizeof a.sun_path)
		return -ENAMETOOLONG;
	strcpy(a.sun_path, sock);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) < 0)
		return -errno;
	/* A unix connect completes at once or fails (EAGAIN: backlog). */
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		int err = errno;

		close(fd);
		return -err;
	}
	return fd;
}

static void
conn_accept(struct conn **tab, const struct sbx_forward_opts *o, int lfd,
    const char *sock, bool loopback)
{
	struct conn *c = NULL;
	int cfd, ufd, slot = -1;

	for (;;) {
		ufd = -1;
		cfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd < 0)
			return;	/* EAGAIN, or the client gave up */
		for (int i = 0; i < FWD_MAX_CONNS && slot < 0; i++) {
			if (tab[i] == NULL)
				slot = i;
		}
		if (slot < 0 || (ufd = dial_proxy(sock)) < 0 ||
		    (c = calloc(1, sizeof *c)) == NULL) {
			/* Over the cap or no proxy: the client sees EOF. */
			if (ufd >= 0)
				close(ufd);
			close(cfd);
			slot = -1;
			continue;
		}
		c->cfd = cfd;
		c->ufd = ufd;
		if (loopback) {
			int n = snprintf(c->cu.buf, sizeof c->cu.buf,
			    "CONNECT localhost:%u HTTP/1.1\r\n"
			    "Host: localhost:%u\r\n\r\n", o->loopback_port,
			    o->loopback_port);

			c->cu.len = (size_t)n;
			c->await = true;
		}
		tab[slot] = c;
		slot = -1;
	}
}

static void
conn_free(struct conn **tab, int i)
{
	close(tab[i]->cfd);
	close(tab[i]->ufd);
	free(tab[i]);
	tab[i] = NULL;
}

/* Read into d (appending while awaiting the 200); false on a hard error. */
static bool
fill(int fd, struct dir *d, bool append, bool *eof)
{
	ssize_t n;

	if (!append && d->len > 0)
		return true;
	n = read(fd, d->buf + d->len, sizeof d->buf - d->len);
	if (n > 0) {
		d->len += (size_t)n;
		return true;
	}
	if (n == 0) {
		*eof = true;
		return true;
	}
	return errno == EAGAIN || errno == EINTR;
}

static bool
drain(int fd, struct dir *d)
{
	ssize_t n;

	if (d->off >= d->len)
		return true;
	/* A peer that went away must not SIGPIPE the agent's parent. */
	n = send(fd, d->buf + d->off, d->len - d->off, MSG_NOSIGNAL);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	d->off += (size_t)n;
	if (d->off == d->len)
		d->off = d->len = 0;
	return true;
}

/* The proxy's answer to our CONNECT: strip it if 200, else give up. */
static void
check_reply(struct conn *c)
{
	char *end;
	size_t hl;

	end = memmem(c->uc.buf, c->uc.len, "\r\n\r\n", 4);
	if (end == NULL) {
		if (c->uc.len == sizeof c->uc.buf || c->u_eof)
			c->dead = true;
		return;
	}
	hl = (size_t)(end - c->uc.buf) + 4;
	if (c->uc.len < 12 || (memcmp(c->uc.buf, "HTTP/1.1 200", 12) != 0 &&
	    memcmp(c->uc.buf, "HTTP/1.0 200", 12) != 0)) {
		c->dead = true;
		return;
	}
	memmove(c->uc.buf, c->uc.buf + hl, c->uc.len - hl);
	c->uc.len -= hl;
	c->await = false;
}

static void
conn_service(struct conn *c, short cev, short uev)
{
	if (cev & (POLLIN | POLLHUP | POLLERR)) {
		if (!c->c_eof && !fill(c->cfd, &c->cu, false, &c->c_eof))
			c->dead = true;
	}
	if (uev & (POLLIN | POLLHUP | POLLERR)) {
		if (!c->u_eof && !fill(c->ufd, &c->uc, c->await, &c->u_eof))
			c->dead = true;
		if (c->await && !c->dead)
			check_reply(c);
	}
	if (c->dead)
		return;
	if (!drain(c->ufd, &c->cu) || (!c->await && !drain(c->cfd, &c->uc))) {
		c->dead = true;
		return;
	}
	/* Half-close each way once its bytes are through. */
	if (c->c_eof && c->cu.len == 0 && !c->u_shut) {
		shutdown(c->ufd, SHUT_WR);
		c->u_shut = true;
	}
	if (c->u_eof && !c->await && c->uc.len == 0 && !c->c_shut) {
		shutdown(c->cfd, SHUT_WR);
		c->c_shut = true;
	}
	if (c->u_shut && c->c_shut)
		c->dead = true;
}

static int
pidfd_of(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

/* Has child ended? Reaps it (and any other child) without blocking. */
static bool
child_done(pid_t child, int *status)
{
	pid_t w;
	int st;

	while ((w = waitpid(-1, &st, WNOHANG)) > 0) {
		if (w == child) {
			*status = st;
			return true;
		}
	}
	if (w < 0 && errno == ECHILD) {
		*status = 127 << 8;
		return true;
	}
	return false;
}

int
sbx_forward_run(const struct sbx_forward_opts *o, pid_t child, int *status)
{
	struct pollfd fds[4 + 2 * FWD_MAX_CONNS];
	struct conn *tab[FWD_MAX_CONNS] = { 0 };
	int map[FWD_MAX_CONNS];
	int pidfd = pidfd_of(child), n, rc = 0;

	for (;;) {
		nfds_t nf = 0;

		if (child_done(child, status))
			break;
		fds[nf].fd = pidfd;	/* negative: ignored by poll */
		fds[nf++].events = POLLIN;
		fds[nf].fd = o->egress_fd;
		fds[nf++].events = POLLIN;
		fds[nf].fd = o->loopback_fd;
		fds[nf++].events = POLLIN;
		fds[nf].fd = o->gateway_fd;
		fds[nf++].events = POLLIN;
		for (int i = 0; i < FWD_MAX_CONNS; i++) {
			struct conn *c = tab[i];

			map[i] = -1;
			if (c == NULL)
				continue;
			map[i] = (int)nf;
			fds[nf].fd = c->cfd;
			fds[nf].events = (short)((c->cu.len == 0 && !c->c_eof ?
			    POLLIN : 0) | (!c->await && c->uc.len > 0 ?
			    POLLOUT : 0));
			fds[nf + 1].fd = c->ufd;
			fds[nf + 1].events = (short)(((c->uc.len == 0 ||
			    c->await) && !c->u_eof ? POLLIN : 0) |
			    (c->cu.len > 0 ? POLLOUT : 0));
			/* Nothing wanted: not polled (no POLLHUP spin). */
			for (int k = 0; k < 2; k++) {
				fds[nf + k].revents = 0;
				if (fds[nf + k].events == 0)
					fds[nf + k].fd = -1;
			}
			nf += 2;
		}
		n = poll(fds, nf, pidfd >= 0 ? -1 : 200);
		if (n < 0 && errno != EINTR) {
			rc = -errno;
			break;
		}
		if (n <= 0)
			continue;
		if (o->egress_fd >= 0 && (fds[1].revents & POLLIN))
			conn_accept(tab, o, o->egress_fd, o->sock, false);
		if (o->loopback_fd >= 0 && (fds[2].revents & POLLIN))
			conn_accept(tab, o, o->loopback_fd, o->sock, true);
		if (o->gateway_fd >= 0 && (fds[3].revents & POLLIN))
			conn_accept(tab, o, o->gateway_fd, o->gateway_sock,
			    false);
		for (int i = 0; i < FWD_MAX_CONNS; i++) {
			if (tab[i] == NULL || map[i] < 0)
				continue;
			conn_service(tab[i], fds[map[i]].revents,
			    fds[map[i] + 1].revents);
			if (tab[i]->dead)
				conn_free(tab, i);
		}
	}
	for (int i = 0; i < FWD_MAX_CONNS; i++) {
		if (tab[i] != NULL)
			conn_free(tab, i);
	}
	if (pidfd >= 0)
		close(pidfd);
	return rc;
}
