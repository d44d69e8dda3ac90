/*
 * bench_holder.c: one endpoint for `make bench`, the real pty_holder_run in
 * its own exec'd process with the options corral-holder gives a
 * trusted_local lease (tui/runtime/holder_main.c: default scrollback, 64 MiB
 * transcript, the shipped agents/ rules for the lifecycle detector), but
 * without the lease journal, so the bench does not depend on it. Screen
 * 50x200 (issue 2 item 5), or --size ROWSxCOLS (a recording's own size).
 * Writes "ok PID" to fd 3 when the agent runs.
 *
 * usage: bench_holder --dir DIR [--allow-control] [--transcript BYTES]
 *        [--size ROWSxCOLS] -- CMD [ARG...]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "bench/lib/bench_util.h"
#include "pty/pty.h"
#include "sandbox-adapters/sbx.h"

int main(int, char **);

/* tui/runtime/holder_main.c HOLDER_TRANSCRIPT_MAX */
#define BENCH_TRANSCRIPT_MAX (64l << 20)

int
main(int argc, char **argv)
{
	struct pty_holder_opts o;
	struct sbx_request req;
	struct sbx_plan *plan = NULL;
	struct pty_rules *rules = NULL;
	const char *dir = NULL, *agents = BENCH_AGENTS_DIR;
	long transcript = BENCH_TRANSCRIPT_MAX;
	bool allow = false;
	uv_loop_t loop;
	int i, rc, rows = BU_ROWS, cols = BU_COLS;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
			dir = argv[++i];
		else if (strcmp(argv[i], "--allow-control") == 0)
			allow = true;
		else if (strcmp(argv[i], "--transcript") == 0 && i + 1 < argc)
			transcript = atol(argv[++i]);
		else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc &&
		    sscanf(argv[i + 1], "%dx%d", &rows, &cols) == 2 &&
		    rows > 0 && cols > 0 && rows <= 1000 && cols <= 1000)
			i++;
		else if (strcmp(argv[i], "--") == 0)
			break;
		else
			break;
	}
	if (dir == NULL || i >= argc || strcmp(argv[i], "--") != 0 ||
	    i + 1 >= argc) {
		fprintf(stderr, "usage: bench_holder --dir DIR "
		    "[--allow-control] [--transcript BYTES] "
		    "[--size ROWSxCOLS] -- CMD...\n");
		return 2;
	}
	memset(&req, 0, sizeof req);
	req.id = "20261129-000000-000-0000";
	req.lease_dir = dir;
	req.cmd = argv + i + 1;
	req.cwd = dir;
	if ((rc = sbx_adapter_local.plan(&req, &plan)) < 0) {
		fprintf(stderr, "bench_holder: plan: %s\n", sbx_strerror(rc));
		return 1;
	}
	/* Shipped rules only: the operator's own would vary the figures. */
	if (pty_rules_new(&rules) < 0 ||
	    pty_rules_load_dirs(rules, &agents, 1, NULL, NULL) != 0) {
		fprintf(stderr, "bench_holder: cannot load %s\n", agents);
		return 1;
	}
	memset(&o, 0, sizeof o);
	o.id = req.id;
	o.dir = dir;
	o.plan = plan;
	o.ctty = PTY_CTTY_TAKE;
	o.rows = rows;
	o.cols = cols;
	o.sb_lines = PTY_SCREEN_SB_DEFAULT;
	o.transcript_max = (size_t)(transcript > 0 ? transcript : 0);
	o.allow_control = allow;
	o.trusted_local = true;
	o.ready_fd = fcntl(3, F_GETFD) >= 0 ? 3 : -1;
	o.owner_fd = -1;
	o.cancel_wait_ms = 200;
	o.rules = rules;
	uv_loop_init(&loop);
	rc = pty_holder_run(&loop, &o);
	uv_loop_close(&loop);
	sbx_plan_free(plan);
	pty_rules_free(rules);
	return rc < 0 ? 100 : rc;
}
