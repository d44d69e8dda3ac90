/*
 * probe.c: is a lease's holder alive? PID plus start time (a reused PID is
 * not the holder), then a status ping over its socket with a deadline, so
 * a wedged holder is caught and no command ever hangs on one (SPEC 9.2).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease/lease.h"
#include "pty/pty.h"
#include "tui/runtime/runtime.h"

enum tui_holder_state
tui_probe_holder(const struct tui_ctx *c, const struct lease_record *r,
    int timeout_ms, char **status_json, char *why, size_t whysz)
{
	struct pty_holder_client *cl = NULL;
	char *sock, *js;
	int rc, err = 0;

	if (status_json != NULL)
		*status_json = NULL;
	if (why != NULL && whysz > 0)
		why[0] = '\0';
	if (r->holder_pid <= 0) {
		snprintf(why, whysz, "no holder recorded");
		return TUI_HOLDER_DEAD;
	}
	if (!lease_proc_alive((pid_t)r->holder_pid, r->holder_start)) {
		snprintf(why, whysz, "holder process %lld is gone",
		    (long long)r->holder_pid);
		return TUI_HOLDER_DEAD;
	}
	if ((sock = tui_ctx_holder_sock(c, r->id)) == NULL)
		return TUI_HOLDER_WEDGED;
	rc = pty_holder_client_open(&cl, sock, 0, timeout_ms);
	free(sock);
	if (rc < 0) {
		snprintf(why, whysz, "holder socket: %s", pty_strerror(rc));
		return rc == -ENOENT || rc == -ECONNREFUSED ? TUI_HOLDER_DEAD :
							     TUI_HOLDER_WEDGED;
	}
	js = pty_holder_client_status(cl, timeout_ms, &err);
	pty_holder_client_free(cl);
	if (js == NULL) {
		snprintf(why, whysz, "holder did not answer within %d ms",
		    timeout_ms);
		return TUI_HOLDER_WEDGED;
	}
	if (status_json != NULL)
		*status_json = js;
	else
		free(js);
	return TUI_HOLDER_ALIVE;
}
