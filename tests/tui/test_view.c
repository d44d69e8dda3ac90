/*
 * test_view.c: the console's pure view (tui/console/view.c): the scrollback
 * window (offsets, clamping, staying on the same text while output
 * arrives, which rows come from where), the cache of SB_LINES frames
 * (extend, replace, caps, hostile frames), which journal leases the list
 * shows, a row's activity, and the detail panel's lines (SPEC 4.3, 4.4).
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "lease/lease.h"
#include "tui/console/console.h"

Suite *view_suite(void);

/* ------------------------------------------------------------------ */
/* Scrollback window                                                   */

START_TEST(test_view_scroll_clamps)
{
	struct tui_scroll s = { .offset = 0, .total = 100 };

	tui_view_scroll_move(&s, 10);
	ck_assert_uint_eq(s.offset, 10);
	tui_view_scroll_move(&s, 1000);
	ck_assert_uint_eq(s.offset, 100);
	tui_view_scroll_move(&s, -30);
	ck_assert_uint_eq(s.offset, 70);
	tui_view_scroll_move(&s, -1000);
	ck_assert_uint_eq(s.offset, 0);
	tui_view_scroll_move(&s, -1);
	ck_assert_uint_eq(s.offset, 0);
	s.total = 0;
	tui_view_scroll_move(&s, 5);
	ck_assert_uint_eq(s.offset, 0);
}
END_TEST

START_TEST(test_view_scroll_keeps_text_as_output_grows)
{
	struct tui_scroll s = { .offset = 0, .total = 50 };

	/* live: new lines do not move the view */
	tui_view_scroll_set_total(&s, 60);
	ck_assert_uint_eq(s.offset, 0);
	ck_assert_uint_eq(s.total, 60);
	/* browsing: the view stays on the same lines */
	tui_view_scroll_move(&s, 20);
	tui_view_scroll_set_total(&s, 65);
	ck_assert_uint_eq(s.offset, 25);
	/* a cleared scrollback cannot leave the offset past the end */
	tui_view_scroll_set_total(&s, 10);
	ck_assert_uint_eq(s.offset, 10);
	ck_assert_uint_eq(s.total, 10);
}
END_TEST

START_TEST(test_view_scroll_sources)
{
	struct tui_scroll s = { .offset = 0, .total = 100 };
	size_t sb = 0, from, n;
	int row = -1;

	/* live: pane row y is screen row y */
	ck_assert(!tui_view_scroll_source(&s, 0, &sb, &row));
	ck_assert_int_eq(row, 0);
	ck_assert(!tui_view_scroll_source(&s, 7, &sb, &row));
	ck_assert_int_eq(row, 7);
	tui_view_scroll_needed(&s, 24, &from, &n);
	ck_assert_uint_eq(n, 0);
	/* 3 back: three scrollback lines, then the screen from its top */
	tui_view_scroll_move(&s, 3);
	ck_assert(tui_view_scroll_source(&s, 0, &sb, &row));
	ck_assert_uint_eq(sb, 97);
	ck_assert(tui_view_scroll_source(&s, 2, &sb, &row));
	ck_assert_uint_eq(sb, 99);
	ck_assert(!tui_view_scroll_source(&s, 3, &sb, &row));
	ck_assert_int_eq(row, 0);
	tui_view_scroll_needed(&s, 24, &from, &n);
	ck_assert_uint_eq(from, 97);
	ck_assert_uint_eq(n, 3);
	/* at the top: line 0 first, a whole pane of scrollback */
	tui_view_scroll_move(&s, 1000);
	ck_assert(tui_view_scroll_source(&s, 0, &sb, &row));
	ck_assert_uint_eq(sb, 0);
	tui_view_scroll_needed(&s, 24, &from, &n);
	ck_assert_uint_eq(from, 0);
	ck_assert_uint_eq(n, 24);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Scrollback cache                                                    */

/* An SB_LINES payload of lines "L<from+i>" (one cell each run). */
static void
sb_payload(struct pty_wbuf *wb, uint32_t from, uint32_t total, uint32_t n)
{
	struct pty_cell cells[16];
	uint8_t line[512];
	char text[16];
	size_t len;

	pty_wbuf_reset(wb);
	pty_wbuf_u32(wb, from);
	pty_wbuf_u32(wb, total);
	pty_wbuf_u32(wb, n);
	for (uint32_t i = 0; i < n; i++) {
		int k = snprintf(text, sizeof text, "L%u", from + i);

		pty_cell_blank(cells, 16);
		for (int c = 0; c < k; c++) {
			cells[c].cp[0] = (uint32_t)text[c];
			cells[c].fg = PTY_COLOR_INDEXED(2);
		}
		len = pty_line_pack(cells, 16, line, sizeof line);
		pty_wbuf_put(wb, line, len);
	}
}

static void
line_text(const struct tui_sbcache *c, size_t idx, char *out, size_t outsz)
{
	struct pty_cell cells[16];
	int n = tui_view_sbcache_line(c, idx, cells, 16);
	size_t k = 0;

	ck_assert_int_ge(n, 0);
	for (int i = 0; i < n && k + 1 < outsz; i++)
		if (cells[i].cp[0] != 0)
			out[k++] = (char)cells[i].cp[0];
	out[k] = '\0';
}

START_TEST(test_view_sbcache_extend_and_replace)
{
	struct tui_sbcache c;
	struct pty_wbuf wb;
	struct pty_cell cells[4];
	char t[32];

	tui_view_sbcache_init(&c);
	pty_wbuf_init(&wb);
	sb_payload(&wb, 10, 500, 5);
	ck_assert_int_eq(tui_view_sbcache_apply(&c, wb.buf, wb.len), 0);
	ck_assert_uint_eq(c.from, 10);
	ck_assert_uint_eq(c.n, 5);
	ck_assert_uint_eq(c.total, 500);
	ck_assert(tui_view_sbcache_has(&c, 10, 5));
	ck_assert(tui_view_sbcache_has(&c, 12, 3));
	ck_assert(!tui_view_sbcache_has(&c, 12, 4));
	ck_assert(!tui_view_sbcache_has(&c, 9, 1));
	line_text(&c, 13, t, sizeof t);
	ck_assert_str_eq(t, "L13");
	ck_assert_int_eq(tui_view_sbcache_line(&c, 15, cells, 4), -1);
	ck_assert_int_eq(tui_view_sbcache_line(&c, 9, cells, 4), -1);
	/* a frame that continues the cache extends it */
	sb_payload(&wb, 15, 500, 3);
	ck_assert_int_eq(tui_view_sbcache_apply(&c, wb.buf, wb.len), 0);
	ck_assert_uint_eq(c.from, 10);
	ck_assert_uint_eq(c.n, 8);
	line_text(&c, 10, t, sizeof t);
	ck_assert_str_eq(t, "L10");
	line_text(&c, 17, t, sizeof t);
	ck_assert_str_eq(t, "L17");
	/* one elsewhere replaces it */
	sb_payload(&wb, 100, 501, 2);
	ck_assert_int_eq(tui_view_sbcache_apply(&c, wb.buf, wb.len), 0);
	ck_assert_uint_eq(c.from, 100);
	ck_assert_uint_eq(c.n, 2);
	ck_assert(!tui_view_sbcache_has(&c, 10, 1));
	line_text(&c, 101, t, sizeof t);
	ck_assert_str_eq(t, "L101");
	/* a narrow unpack is cut to the room given */
	ck_assert_int_eq(tui_view_sbcache_line(&c, 101, cells, 2), 2);
	tui_view_sbcache_reset(&c);
	ck_assert(!tui_view_sbcache_has(&c, 100, 1));
	ck_assert(tui_view_sbcache_has(&c, 100, 0));
	pty_wbuf_free(&wb);
	tui_view_sbcache_free(&c);
	tui_view_sbcache_free(NULL);
}
END_TEST

START_TEST(test_view_sbcache_empty_frame)
{
	struct tui_sbcache c;
	struct pty_wbuf wb;

	/* a final screen with no scrollback carries a frame of 0 lines */
	tui_view_sbcache_init(&c);
	pty_wbuf_init(&wb);
	sb_payload(&wb, 0, 0, 0);
	ck_assert_int_eq(tui_view_sbcache_apply(&c, wb.buf, wb.len), 0);
	ck_assert_uint_eq(c.n, 0);
	ck_assert_uint_eq(c.total, 0);
	ck_assert(!tui_view_sbcache_has(&c, 0, 1));
	ck_assert_int_eq(tui_view_sbcache_line(&c, 0, NULL, 0), -1);
	pty_wbuf_free(&wb);
	tui_view_sbcache_free(&c);
}
END_TEST

START_TEST(test_view_sbcache_refuses_hostile_frames)
{
	struct tui_sbcache c;
	struct pty_wbuf wb;
	uint8_t *bad;

	tui_view_sbcache_init(&c);
	pty_wbuf_init(&wb);
	sb_payload(&wb, 0, 10, 4);
	ck_assert_int_eq(tui_view_sbcache_apply(&c, wb.buf, wb.len), 0);
	/* truncated, an inflated count, trailing junk: refused, cache kept */
	ck_assert_int_eq(tui_view_sbcache_apply(&c, wb.buf, wb.len - 1),
	    PTY_EPROTO);
	bad = malloc(wb.len + 1);
	memcpy(bad, wb.buf, wb.len);
	bad[8] = 5;
	ck_assert_int_eq(tui_view_sbcache_apply(&c, bad, wb.len), PTY_EPROTO);
	bad[8] = 4;
	bad[wb.len] = 0x41;
	ck_assert_int_eq(tui_view_sbcache_apply(&c, bad, wb.len + 1),
	    PTY_EPROTO);
	ck_assert_int_eq(tui_view_sbcache_apply(&c, bad, 3), PTY_EPROTO);
	ck_assert_uint_eq(c.from, 0);
	ck_assert_uint_eq(c.n, 4);
	free(bad);
	pty_wbuf_free(&wb);
	tui_view_sbcache_free(&c);
}
END_TEST

START_TEST(test_view_sbcache_is_bounded)
{
	struct tui_sbcache c;
	struct pty_wbuf wb;
	uint32_t at = 0;
	int rc = 0;

	tui_view_sbcache_init(&c);
	pty_wbuf_init(&wb);
	/* continuing frames of 2000 lines: it stops at the cap */
	while (rc == 0 && at <= TUI_SBCACHE_MAX) {
		sb_payload(&wb, at, 100000, 2000);
		rc = tui_view_sbcache_apply(&c, wb.buf, wb.len);
		if (rc == 0)
			at += 2000;
	}
	ck_assert_int_eq(rc, -E2BIG);
	ck_assert_uint_le(c.n, TUI_SBCACHE_MAX);
	ck_assert_uint_eq(c.n, at);
	pty_wbuf_free(&wb);
	tui_view_sbcache_free(&c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Leases                                                              */

START_TEST(test_view_listed)
{
	struct lease_record r;
	char br[] = "corral/x";

	memset(&r, 0, sizeof r);
	r.branch = br;
	r.state = LEASE_STATE_RUNNING;
	ck_assert(tui_view_listed(&r, false));
	ck_assert(tui_view_needs_holder(&r));
	r.state = LEASE_STATE_PROVISIONING;
	ck_assert(tui_view_listed(&r, false));
	ck_assert(!tui_view_needs_holder(&r));
	r.holder_pid = 42;
	ck_assert(tui_view_needs_holder(&r));
	/* result_ready is not final: still listed, no holder */
	r.state = LEASE_STATE_RESULT_READY;
	ck_assert(tui_view_listed(&r, false));
	ck_assert(!tui_view_needs_holder(&r));
	/* final and seen: only if already shown */
	r.state = LEASE_STATE_FAILED;
	ck_assert(!tui_view_listed(&r, false));
	ck_assert(tui_view_listed(&r, true));
	r.unseen = true;
	ck_assert(tui_view_listed(&r, false));
	r.unseen = false;
	r.cleanup = LEASE_CLEANUP_PENDING;
	ck_assert(tui_view_listed(&r, false));
	r.cleanup = LEASE_CLEANUP_FAILED;
	ck_assert(tui_view_listed(&r, false));
	r.cleanup = LEASE_CLEANUP_CONFIRMED;
	ck_assert(!tui_view_listed(&r, false));
	ck_assert(!tui_view_stillborn(&r));
	/* failed before it created anything (no branch): no row, even
	 * unseen, unless already shown (issue 21) */
	r.branch = NULL;
	r.unseen = true;
	ck_assert(tui_view_stillborn(&r));
	ck_assert(!tui_view_listed(&r, false));
	ck_assert(tui_view_listed(&r, true));
	r.mode = LEASE_MODE_TRUSTED_LOCAL;
	ck_assert(!tui_view_stillborn(&r));
	r.mode = LEASE_MODE_SANDBOXED;
	r.cleanup = LEASE_CLEANUP_PENDING;
	ck_assert(!tui_view_stillborn(&r));
	r.cleanup = LEASE_CLEANUP_NONE;
	r.state = LEASE_STATE_PROVISIONING;
	ck_assert(!tui_view_stillborn(&r));
}
END_TEST

/* issue 9: long steps show their progress in the row */
START_TEST(test_view_progress)
{
	struct lease_record r;
	char buf[96];

	memset(&r, 0, sizeof r);
	r.state = LEASE_STATE_PROVISIONING;
	r.updated_at = 1000;
	ck_assert(tui_view_progress(&r, 13000, buf, sizeof buf));
	ck_assert_str_eq(buf, "provisioning (seeding)... 12s");
	r.state = LEASE_STATE_RUNNING;
	ck_assert(!tui_view_progress(&r, 13000, buf, sizeof buf));
	ck_assert_str_eq(buf, "");
	r.state = LEASE_STATE_RESULT_READY;
	r.result = (char *)"{\"status\": \"ready\", \"commit\": \"ab\", "
	    "\"checks\": null}";
	ck_assert(tui_view_progress(&r, 61000, buf, sizeof buf));
	ck_assert_str_eq(buf, "running checks... 1m00s");
	r.result = (char *)"{\"status\": \"ready\", \"commit\": \"ab\", "
	    "\"checks\": []}";
	ck_assert(!tui_view_progress(&r, 61000, buf, sizeof buf));
	r.result = (char *)"not json";
	ck_assert(!tui_view_progress(&r, 61000, buf, sizeof buf));
}
END_TEST

START_TEST(test_view_activity)
{
	struct lease_record r;

	memset(&r, 0, sizeof r);
	r.state = LEASE_STATE_RUNNING;
	r.activity = LEASE_ACT_WORKING;
	ck_assert_int_eq(tui_view_activity(&r, false, false, 0, false, NULL),
	    TUI_ACTIVITY_WORKING);
	/* the holder's own word wins over the journal's */
	ck_assert_int_eq(tui_view_activity(&r, false, false, 0, false,
	    "blocked"), TUI_ACTIVITY_BLOCKED);
	ck_assert_int_eq(tui_view_activity(&r, false, false, 0, false,
	    "nonsense"), TUI_ACTIVITY_WORKING);
	/* an exit decides: 0 done, else failed; cancelled first */
	ck_assert_int_eq(tui_view_activity(&r, false, true, 0, false, NULL),
	    TUI_ACTIVITY_DONE);
	ck_assert_int_eq(tui_view_activity(&r, false, true, 3 << 8, false,
	    "working"), TUI_ACTIVITY_FAILED);
	ck_assert_int_eq(tui_view_activity(&r, false, true, SIGKILL, true,
	    NULL), TUI_ACTIVITY_CANCELLED);
	/* lost beats everything */
	ck_assert_int_eq(tui_view_activity(&r, true, true, 0, false, NULL),
	    TUI_ACTIVITY_LOST);
}
END_TEST

START_TEST(test_view_mode_label)
{
	struct lease_record r;
	char bw[] = "bwrap", cls[] = "bwrap (namespaces, shared kernel)";
	char cmd[] = "command", asserted[] = "operator-asserted";

	memset(&r, 0, sizeof r);
	/* no sandbox: a tag of its own at every width (issue 21) */
	r.mode = LEASE_MODE_TRUSTED_LOCAL;
	ck_assert_str_eq(tui_view_mode_label(&r), "HOST");
	ck_assert_str_eq(tui_view_mode_long(&r), "HOST trusted_local");
	r.mode = LEASE_MODE_SANDBOXED;
	ck_assert_str_eq(tui_view_mode_label(&r), "sbx");
	r.adapter = bw;
	ck_assert_str_eq(tui_view_mode_label(&r), "bwrap");
	ck_assert_str_eq(tui_view_mode_long(&r), "bwrap");
	r.isolation = cls;
	ck_assert_str_eq(tui_view_mode_label(&r), "bwrap");
	ck_assert_str_eq(tui_view_mode_long(&r), cls);
	r.adapter = cmd;
	r.isolation = asserted;
	ck_assert_str_eq(tui_view_mode_label(&r), "cmd");
	ck_assert_str_eq(tui_view_mode_long(&r), asserted);
	r.adapter = NULL;
	ck_assert_str_eq(tui_view_mode_label(&r), asserted);
}
END_TEST

static const char *
kv_get(const struct tui_kv *kv, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(kv[i].key, key) == 0)
			return kv[i].value;
	return NULL;
}

START_TEST(test_view_detail_fields)
{
	struct lease_record r;
	struct tui_kv kv[TUI_VIEW_DETAIL_MAX];
	char buf[1024];
	char base[] = "0123456789abcdef0123456789abcdef01234567";
	char ref[] = "refs/heads/main", br[] = "corral/x", wt[] = "/w/t";
	char ad[] = "bwrap", iso[] = "namespaces";
	size_t n;

	memset(&r, 0, sizeof r);
	strcpy(r.id, "20260101-000000-000-abcd");
	r.state = LEASE_STATE_RUNNING;
	n = tui_view_detail(&r, NULL, NULL, kv, TUI_VIEW_DETAIL_MAX, buf,
	    sizeof buf);
	ck_assert_uint_ge(n, 12);
	/* absent values read "-", never NULL */
	for (size_t i = 0; i < n; i++) {
		ck_assert_ptr_nonnull(kv[i].key);
		ck_assert_ptr_nonnull(kv[i].value);
	}
	ck_assert_str_eq(kv_get(kv, n, "base"), "-");
	ck_assert_str_eq(kv_get(kv, n, "branch"), "-");
	ck_assert_str_eq(kv_get(kv, n, "receipt"), "-");
	ck_assert_str_eq(kv_get(kv, n, "title"), "-");
	ck_assert_ptr_null(kv_get(kv, n, "lost"));
	ck_assert_str_eq(kv_get(kv, n, "state"), "running, cleanup none");
	ck_assert_str_eq(kv[0].key, "state");

	r.base = base;
	r.base_ref = ref;
	r.branch = br;
	r.worktree = wt;
	r.adapter = ad;
	r.isolation = iso;
	r.receipt_len = 7;
	strcpy(r.receipt_head, "ffeeddccbbaa99887766554433221100");
	r.cleanup = LEASE_CLEANUP_PENDING;
	n = tui_view_detail(&r, "my title", "holder process 9 is gone", kv,
	    TUI_VIEW_DETAIL_MAX, buf, sizeof buf);
	ck_assert_str_eq(kv_get(kv, n, "base"),
	    "0123456789ab (refs/heads/main)");
	ck_assert_str_eq(kv_get(kv, n, "branch"), "corral/x");
	ck_assert_str_eq(kv_get(kv, n, "worktree"), "/w/t");
	ck_assert_str_eq(kv_get(kv, n, "adapter"), "bwrap (namespaces)");
	ck_assert_str_eq(kv_get(kv, n, "receipt"),
	    "7 entries, head ffeeddccbbaa9988");
	ck_assert_str_eq(kv_get(kv, n, "state"), "running, cleanup pending");
	ck_assert_str_eq(kv_get(kv, n, "title"), "my title");
	ck_assert_str_eq(kv_get(kv, n, "lost"), "holder process 9 is gone");
	ck_assert_str_eq(kv[1].key, "lost");
	ck_assert_str_eq(kv_get(kv, n, "id"), "20260101-000000-000-abcd");
	ck_assert_ptr_null(kv_get(kv, n, "cost"));
	/* what its model requests cost, once it made one */
	r.usage.requests = 3;
	r.usage.input = 1000;
	r.usage.cache_read = 200;
	r.usage.output = 50;
	r.usage.cost_nano = 420000000;
	n = tui_view_detail(&r, NULL, NULL, kv, TUI_VIEW_DETAIL_MAX, buf,
	    sizeof buf);
	ck_assert_str_eq(kv_get(kv, n, "cost"),
	    "$0.42, 3 requests, 1200 tokens in, 50 out");
	/* the caller's cap is honoured */
	ck_assert_uint_eq(tui_view_detail(&r, NULL, NULL, kv, 3, buf,
	    sizeof buf), 3);
}
END_TEST

/* Policy and limits in a few words (the full text is in `corral show`). */
START_TEST(test_view_detail_summaries)
{
	struct lease_record r;
	struct tui_kv kv[TUI_VIEW_DETAIL_MAX];
	char buf[1024];
	char pol[] = "# the lease's effective policy\n[network]\n"
	    "allow = api.demo.invalid:443\non_egress_violation = record\n"
	    "[limits]\nwall_time = 3600\n[env]\nallow = HOME\n";
	char nonet[] = "[network]\nallow =\n[env]\nallow = TERM\n";
	char raw[] = "not an ini";
	char lim[] = "{\"cpu_cores\":2,\"disk_bytes\":67108864,"
	    "\"memory_bytes\":536870912,\"pids\":128,\"wall_time_s\":3600}";
	char badlim[] = "[1,2]";
	size_t n;

	memset(&r, 0, sizeof r);
	r.state = LEASE_STATE_RUNNING;
	r.policy = pol;
	r.limits = lim;
	n = tui_view_detail(&r, NULL, NULL, kv, TUI_VIEW_DETAIL_MAX, buf,
	    sizeof buf);
	ck_assert_str_eq(kv_get(kv, n, "policy"),
	    "allow api.demo.invalid:443; violation: record");
	ck_assert_str_eq(kv_get(kv, n, "limits"),
	    "wall 1h00m mem 512M pids 128 disk 64M cpu 2");
	r.policy = nonet;	/* [env] allow is not the network's */
	r.limits = badlim;
	n = tui_view_detail(&r, NULL, NULL, kv, TUI_VIEW_DETAIL_MAX, buf,
	    sizeof buf);
	ck_assert_str_eq(kv_get(kv, n, "policy"), "no network");
	ck_assert_str_eq(kv_get(kv, n, "limits"), "[1,2]");
	r.policy = raw;
	n = tui_view_detail(&r, NULL, NULL, kv, TUI_VIEW_DETAIL_MAX, buf,
	    sizeof buf);
	ck_assert_str_eq(kv_get(kv, n, "policy"), "not an ini");
}
END_TEST

START_TEST(test_view_detail_small_buffer)
{
	struct lease_record r;
	struct tui_kv kv[TUI_VIEW_DETAIL_MAX];
	char buf[8];
	char reason[] = "a very long failure reason that will not fit";
	size_t n;

	memset(&r, 0, sizeof r);
	r.state = LEASE_STATE_FAILED;
	r.failed_reason = reason;
	n = tui_view_detail(&r, NULL, NULL, kv, TUI_VIEW_DETAIL_MAX, buf,
	    sizeof buf);
	ck_assert_uint_gt(n, 0);
	/* truncated, still a string inside buf */
	ck_assert_uint_lt(strlen(kv_get(kv, n, "state")), sizeof buf);
}
END_TEST

Suite *
view_suite(void)
{
	Suite *s = suite_create("view");
	TCase *tc = tcase_create("Scroll");

	tcase_add_test(tc, test_view_scroll_clamps);
	tcase_add_test(tc, test_view_scroll_keeps_text_as_output_grows);
	tcase_add_test(tc, test_view_scroll_sources);
	suite_add_tcase(s, tc);
	tc = tcase_create("Cache");
	tcase_add_test(tc, test_view_sbcache_extend_and_replace);
	tcase_add_test(tc, test_view_sbcache_empty_frame);
	tcase_add_test(tc, test_view_sbcache_refuses_hostile_frames);
	tcase_add_test(tc, test_view_sbcache_is_bounded);
	suite_add_tcase(s, tc);
	tc = tcase_create("Leases");
	tcase_add_test(tc, test_view_listed);
	tcase_add_test(tc, test_view_activity);
	tcase_add_test(tc, test_view_progress);
	tcase_add_test(tc, test_view_mode_label);
	tcase_add_test(tc, test_view_detail_fields);
	tcase_add_test(tc, test_view_detail_small_buffer);
	tcase_add_test(tc, test_view_detail_summaries);
	suite_add_tcase(s, tc);
	return s;
}
