/*
 * sbx_forward.h: the egress forwarder inside the agent zone, part of
 * corral-sbx-init (SPEC 8.2; SANDBOX.md 5.b): TCP on 127.0.0.1 in the
 * zone's own network namespace, piped to the lease proxy's unix socket
 * (and 127.0.0.1:3129 to the model gateway's, byte for byte).
 */
#ifndef CORRAL_SBX_FORWARD_H
#define CORRAL_SBX_FORWARD_H

#include <sys/types.h>

struct sbx_forward_opts {
	const char *sock;	/* the proxy's socket inside the zone */
	int egress_fd;		/* listening on 127.0.0.1:3128 */
	int loopback_fd;	/* listening on 127.0.0.1:PORT, or -1 */
	unsigned loopback_port;	/* tunnelled as CONNECT localhost:PORT */
	const char *gateway_sock;	/* the model gateway's socket, or NULL */
	int gateway_fd;		/* listening on 127.0.0.1:3129, or -1 */
};

/* A close-on-exec TCP socket listening on 127.0.0.1:port; -errno. */
int sbx_forward_listen(unsigned port);
/*
 * Pipe connections until the process `child` exits (a pidfd wakes the
 * loop; without pidfd_open, a 200 ms poll); its wait status in *status.
 * Connections still open then are dropped with the process. 0 or -errno.
 */
int sbx_forward_run(const struct sbx_forward_opts *, pid_t child,
    int *status);

#endif /* CORRAL_SBX_FORWARD_H */
