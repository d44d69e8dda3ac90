/*
 * spawn.c: start a lease's holder (the corral-holder program, installed
 * beside corral) detached from whoever asked (SPEC 2): a double fork into a
 * new session, stdio on /dev/null and the lease's
 * holder.log, only the readiness pipe (and the owner's socket for `wrap`)
 * inherited; then wait, with a deadline, for the holder's "ok PID" or
 * "err MSG" line.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tui/runtime/runtime.h"

#define SPAWN_READY_MS 20000
#define SPAWN_MAX_ARGS 4096

static void
grandchild(struct tui_ctx *c, const struct tui_spawn *sp, char **argv,
    int ready_fd)
{
	char *dir = tui_ctx_lease_dir(c, sp->id), *log = NULL;
	int hi_ready, hi_owner = -1, fd;

	hi_ready = fcntl(ready_fd, F_DUPFD, 100);
	if (sp->owner_fd >= 0)
		hi_owner = fcntl(sp->owner_fd, F_DUPFD, 100);
	if (hi_ready < 0 || (sp->owner_fd >= 0 && hi_owner < 0))
		_exit(127);
	fd = open("/dev/null", O_RDWR);
	if (fd < 0)
		_exit(127);
	dup2(fd, 0);
	dup2(fd, 1);
	if (dir != NULL && asprintf(&log, "%s/holder.log", dir) > 0) {
		int lf = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
		if (lf >= 0) {
			dup2(lf, 2);
			close(lf);
		} else {
			dup2(fd, 2);
		}
	} else {
		dup2(fd, 2);
	}
	dup2(hi_ready, 3);
	if (hi_owner >= 0)
		dup2(hi_owner, 4);
	close_range(hi_owner >= 0 ? 5 : 4, ~0U, 0);
	signal(SIGHUP, SIG_IGN);
	if (getenv("GLIBC_TUNABLES") == NULL &&
	    setenv("GLIBC_TUNABLES", TUI_HOLDER_TUNABLES, 1) == 0)
		setenv(TUI_HOLDER_TUNED_ENV, "1", 1);
	execv(argv[0], argv);
	_exit(127);
}

static int
spawn(struct tui_ctx *c, const struct tui_spawn *sp, char *exe,
    pid_t *child_pid, char *err, size_t errsz)
{
	char rows[16], cols[16], line[600];
	char *argv[SPAWN_MAX_ARGS];
	int rp[2], n = 0, st;
	size_t got = 0;
	pid_t pid, w;

	snprintf(rows, sizeof rows, "%d", sp->rows);
	snprintf(cols, sizeof cols, "%d", sp->cols);
	argv[n++] = exe;
	argv[n++] = "--id";
	argv[n++] = (char *)sp->id;
	argv[n++] = "--sandbox";
	argv[n++] = (char *)sp->sandbox;
	argv[n++] = "--rows";
	argv[n++] = rows;
	argv[n++] = "--cols";
	argv[n++] = cols;
	if (sp->allow_control)
		argv[n++] = "--allow-control";
	if (sp->owner_fd >= 0)
		argv[n++] = "--owner";
	if (sp->agent != NULL) {
		argv[n++] = "--agent";
		argv[n++] = (char *)sp->agent;
	}
	if (sp->cwd != NULL) {
		argv[n++] = "--cwd";
		argv[n++] = (char *)sp->cwd;
	}
	argv[n++] = "--";
	for (size_t i = 0; sp->cmd[i] != NULL; i++) {
		if (n >= SPAWN_MAX_ARGS - 1) {
			snprintf(err, errsz, "too many arguments");
			return -E2BIG;
		}
		argv[n++] = sp->cmd[i];
	}
	argv[n] = NULL;

	if (pipe2(rp, O_CLOEXEC) < 0) {
		snprintf(err, errsz, "pipe: %s", strerror(errno));
		return -errno;
	}
	fflush(NULL);
	if ((pid = fork()) < 0) {
		snprintf(err, errsz, "fork: %s", strerror(errno));
		close(rp[0]);
		close(rp[1]);
		return -errno;
	}
	if (pid == 0) {
		close(rp[0]);
		setsid();
		if (fork() == 0)
			grandchild(c, sp, argv, rp[1]);
		_exit(0);
	}
	close(rp[1]);
	while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
	for (;;) {
		struct pollfd p = { .fd = rp[0], .events = POLLIN };
		ssize_t r;
		int pr = poll(&p, 1, SPAWN_READY_MS);

		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0) {
			snprintf(err, errsz, "holder did not report ready "
					     "within %d s", SPAWN_READY_MS / 1000);
			close(rp[0]);
			return -ETIMEDOUT;
		}
		r = read(rp[0], line + got, sizeof line - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
		if (got >= sizeof line - 1 || memchr(line, '\n', got) != NULL)
			break;
	}
	close(rp[0]);
	line[got] = '\0';
	line[strcspn(line, "\n")] = '\0';
	if (strncmp(line, "ok ", 3) == 0) {
		*child_pid = (pid_t)strtol(line + 3, NULL, 10);
		return 0;
	}
	if (strncmp(line, "err ", 4) == 0)
		snprintf(err, errsz, "%s", line + 4);
	else
		snprintf(err, errsz, "holder exited before it was ready "
				     "(see its holder.log)");
	return -EIO;
}

int
tui_spawn_holder(struct tui_ctx *c, const struct tui_spawn *sp,
    pid_t *child_pid, char *err, size_t errsz)
{
	char *exe;
	int rc;

	snprintf(err, errsz, "holder did not start");
	/* Its own program, beside corral (tui/CMakeLists.txt). */
	if ((exe = tui_sandbox_helper_path(c, "corral-holder",
	    "CORRAL_HOLDER")) == NULL) {
		snprintf(err, errsz, "corral-holder not found next to corral "
		    "(or in $CORRAL_HOLDER)");
		return -ENOENT;
	}
	rc = spawn(c, sp, exe, child_pid, err, errsz);
	free(exe);
	return rc;
}
