/*
 * error.c: pty_strerror, the text of the module's error codes (STYLE C.1):
 * its own PTY_E* codes and negative errno values.
 */
#include <string.h>

#include "pty/pty.h"

const char *
pty_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case PTY_EPROTO:
		return "malformed frame or packed line";
	case PTY_ETOOBIG:
		return "frame or line over its cap";
	case PTY_EDENIED:
		return "holder refused the request";
	case PTY_ETIMEDOUT:
		return "holder did not answer in time";
	case PTY_EEXEC:
		return "the command could not be executed";
	case PTY_ECLOSED:
		return "peer went away";
	default:
		break;
	}
	if (err < 0 && err > PTY_EBASE)
		return strerror(-err);
	return "unknown error";
}
