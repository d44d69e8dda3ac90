/*
 * check_util.h: helpers shared by the Check suites: temp directories,
 * whole-file reads, golden comparisons, and waiting on a condition with a
 * deadline (never a sleep standing in for a result).
 */
#ifndef CORRAL_CHECK_UTIL_H
#define CORRAL_CHECK_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* mkdtemp under $TMPDIR or /tmp; returns a malloc'd path (aborts on error). */
char *cu_tmpdir(const char *tag);
/* rm -rf path (no symlink following). */
void cu_rmrf(const char *path);
/* Read a whole file; malloc'd, NUL-terminated; *len optional. NULL on error. */
char *cu_read_file(const char *path, size_t *len);
/* Write a whole file; 0 or -errno. */
int cu_write_file(const char *path, const void *buf, size_t len);
/* Path of a source-tree file: $CORRAL_SRC/rel (malloc'd). */
char *cu_src_path(const char *rel);
/* Path of a fixture program: $CORRAL_FIXTURES/name (malloc'd). */
char *cu_fixture_path(const char *name);
/* Path of the corral binary: $CORRAL_BIN (malloc'd). */
char *cu_corral_bin(void);
/* Monotonic milliseconds. */
uint64_t cu_now_ms(void);
/*
 * The scope a test's uid slot claims carry: "/proc/PID" of the calling
 * process, a directory that goes with it, so the slots of a run that died
 * are stale and the next claim takes them back. Static storage.
 */
const char *cu_scope(void);
/* Run a shell command, capture stdout (malloc'd) and its exit status. */
char *cu_run(const char *cmd, int *status);

#endif
