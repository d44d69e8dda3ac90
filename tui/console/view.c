/*
 * view.c: the console's view of its leases and of the focused pane's
 * scrollback (STYLE F): which journal leases the list shows, the activity
 * and mode label of a row, the detail panel's lines (SPEC 4.3), the
 * scrollback window (SPEC 4.4) and the cache of scrollback lines a holder
 * sent. Pure: records and frames in, values out; no loop, no terminal.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <jansson.h>

#include "lease/lease.h"
#include "tui/console/console.h"

/* ---- scrollback window -------------------------------------------------- */

void
tui_view_scroll_move(struct tui_scroll *s, long lines)
{
	assert(s != NULL);
	if (lines < 0) {
		size_t down = (size_t)-(lines + 1) + 1;

		s->offset = down >= s->offset ? 0 : s->offset - down;
	} else {
		size_t fwd = (size_t)lines;

		s->offset = fwd >= s->total - s->offset ? s->total :
		    s->offset + fwd;
	}
}

void
tui_view_scroll_set_total(struct tui_scroll *s, size_t total)
{
	assert(s != NULL);
	if (s->offset > 0 && total > s->total)
		s->offset += total - s->total;
	s->total = total;
	if (s->offset > total)
		s->offset = total;
}

bool
tui_view_scroll_source(const struct tui_scroll *s, int y, size_t *sb, int *row)
{
	size_t line;

	assert(s != NULL && sb != NULL && row != NULL && y >= 0);
	/* The pane shows lines total - offset + y of scrollback + screen. */
	line = s->total - s->offset + (size_t)y;
	if (line < s->total) {
		*sb = line;
		return true;
	}
	*row = (int)(line - s->total);
	return false;
}

void
tui_view_scroll_needed(const struct tui_scroll *s, int pane_h, size_t *from,
    size_t *n)
{
	assert(s != NULL && from != NULL && n != NULL);
	*from = s->total - s->offset;
	*n = pane_h <= 0 ? 0 : s->offset < (size_t)pane_h ? s->offset :
	    (size_t)pane_h;
}

/* ---- scrollback cache --------------------------------------------------- */

void
tui_view_sbcache_init(struct tui_sbcache *c)
{
	assert(c != NULL);
	memset(c, 0, sizeof *c);
}

void
tui_view_sbcache_free(struct tui_sbcache *c)
{
	if (c == NULL)
		return;
	free(c->buf);
	free(c->off);
	memset(c, 0, sizeof *c);
}

void
tui_view_sbcache_reset(struct tui_sbcache *c)
{
	assert(c != NULL);
	c->from = c->n = c->total = c->len = 0;
}

static int
grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 64;
	void *np;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	if ((np = realloc(*p, ncap * elem)) == NULL)
		return -ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

int
tui_view_sbcache_apply(struct tui_sbcache *c, const uint8_t *p, size_t len)
{
	struct pty_rd r;
	uint32_t from, total, n;
	size_t base, nlines, blen, used, start, i;
	bool extend;

	assert(c != NULL && (p != NULL || len == 0));
	if (pty_wire_check(PTY_W_SB_LINES, p, len) < 0)
		return PTY_EPROTO;
	pty_rd_init(&r, p, len);
	from = pty_rd_u32(&r);
	total = pty_rd_u32(&r);
	n = pty_rd_u32(&r);
	if (r.bad)
		return PTY_EPROTO;
	extend = c->n > 0 && from == c->from + c->n;
	base = extend ? c->n : 0;
	blen = extend ? c->len : 0;
	nlines = base + n;
	if (nlines > TUI_SBCACHE_MAX)
		return -E2BIG;
	if (grow((void **)&c->off, &c->offcap, nlines + 1, sizeof *c->off) <
	    0 || grow((void **)&c->buf, &c->cap, blen + (len - r.off), 1) < 0)
		return -ENOMEM;
	c->off[base] = blen;
	start = r.off;
	for (i = 0; i < n; i++) {
		if (pty_line_unpack(p + r.off, len - r.off, NULL, 0, &used) <
		    0)
			return PTY_EPROTO;	/* cannot happen after check */
		r.off += used;
		c->off[base + i + 1] = blen + (r.off - start);
	}
	if (r.off > start)
		memcpy(c->buf + blen, p + start, r.off - start);
	c->len = blen + (r.off - start);
	if (!extend)
		c->from = from;
	c->n = nlines;
	c->total = total;
	return 0;
}

bool
tui_view_sbcache_has(const struct tui_sbcache *c, size_t from, size_t n)
{
	assert(c != NULL);
	if (n == 0)
		return true;
	return c->n > 0 && from >= c->from && from - c->from <= c->n &&
	    n <= c->n - (from - c->from);
}

int
tui_view_sbcache_line(const struct tui_sbcache *c, size_t idx,
    struct pty_cell *cells, int maxcells)
{
	size_t k, used;
	int rc;

	assert(c != NULL && (cells != NULL || maxcells == 0));
	if (c->n == 0 || idx < c->from || idx - c->from >= c->n)
		return -1;
	k = idx - c->from;
	rc = pty_line_unpack(c->buf + c->off[k], c->off[k + 1] - c->off[k],
	    cells, maxcells, &used);
	if (rc < 0)
		return -1;
	return rc < maxcells ? rc : maxcells;
}

/* ---- leases ------------------------------------------------------------- */

bool
tui_view_needs_holder(const struct lease_record *r)
{
	assert(r != NULL);
	return r->state == LEASE_STATE_RUNNING ||
	    (r->state == LEASE_STATE_PROVISIONING && r->holder_pid > 0);
}

bool
tui_view_stillborn(const struct lease_record *r)
{
	assert(r != NULL);
	/* SPEC 6 step 1 failed (nothing created); step 3 names the branch */
	return r->state == LEASE_STATE_FAILED &&
	    r->mode == LEASE_MODE_SANDBOXED &&
	    r->cleanup != LEASE_CLEANUP_PENDING &&
	    r->cleanup != LEASE_CLEANUP_FAILED && r->branch == NULL &&
	    r->worktree == NULL && r->workspace == NULL &&
	    r->sandbox_id == NULL;
}

bool
tui_view_listed(const struct lease_record *r, bool shown)
{
	assert(r != NULL);
	if (shown)
		return true;
	/* a failed `corral new` that created nothing: no row (issue 21) */
	if (tui_view_stillborn(r))
		return false;
	if (!lease_fsm_state_final(r->state) || r->unseen)
		return true;
	/* SPEC 9.3 keeps leases with unfinished cleanup in sight. */
	return r->cleanup == LEASE_CLEANUP_PENDING ||
	    r->cleanup == LEASE_CLEANUP_FAILED;
}

enum tui_activity
tui_view_activity(const struct lease_record *r, bool lost, bool exited,
    int exit_status, bool cancelled, const char *holder_activity)
{
	enum tui_activity a;

	assert(r != NULL);
	if (lost)
		return TUI_ACTIVITY_LOST;
	if (exited) {
		if (cancelled)
			return TUI_ACTIVITY_CANCELLED;
		return WIFEXITED(exit_status) && WEXITSTATUS(exit_status) == 0 ?
		    TUI_ACTIVITY_DONE : TUI_ACTIVITY_FAILED;
	}
	if (holder_activity != NULL &&
	    (a = tui_activity_from_name(holder_activity)) !=
	    TUI_ACTIVITY_UNKNOWN)
		return a;
	return tui_activity_from_name(lease_fsm_activity_name(r->activity));
}

const char *
tui_view_mode_label(const struct lease_record *r)
{
	assert(r != NULL);
	/* SPEC 3: no sandbox at all; it must never read as one. */
	if (r->mode == LEASE_MODE_TRUSTED_LOCAL)
		return "HOST";
	/* the command adapter: a sandbox the operator vouches for */
	if (r->adapter != NULL && strcmp(r->adapter, "command") == 0)
		return "cmd";
	if (r->adapter != NULL && r->adapter[0] != '\0')
		return r->adapter;
	return r->isolation != NULL && r->isolation[0] != '\0' ?
	    r->isolation : "sbx";
}

const char *
tui_view_mode_long(const struct lease_record *r)
{
	assert(r != NULL);
	if (r->mode == LEASE_MODE_TRUSTED_LOCAL)
		return "HOST trusted_local";
	if (r->isolation != NULL && r->isolation[0] != '\0')
		return r->isolation;	/* "bwrap unverified" */
	return tui_view_mode_label(r);
}

/* Append a formatted value to buf; NULL when it does not fit. */
static const char *
fmt(char *buf, size_t bufsz, size_t *used, const char *f, ...)
    __attribute__((format(printf, 4, 5)));

static const char *
fmt(char *buf, size_t bufsz, size_t *used, const char *f, ...)
{
	va_list ap;
	char *at = buf + *used;
	size_t room = bufsz - *used;
	int n;

	if (room == 0)
		return NULL;
	va_start(ap, f);
	n = vsnprintf(at, room, f, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	*used += (size_t)n + 1 < room ? (size_t)n + 1 : room;
	return at;
}

static const char *
or_dash(const char *s)
{
	return s != NULL && s[0] != '\0' ? s : "-";
}

/* bytes as "512M", "1G", "300K", "17" (the largest exact unit, else M). */
static void
human_bytes(int64_t b, char *out, size_t sz)
{
	static const char units[] = "KMGT";
	int u = -1;

	while (u < 3 && b >= 1024 && b % 1024 == 0) {
		b /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(out, sz, "%" PRId64, b);
	else
		snprintf(out, sz, "%" PRId64 "%c", b, units[u]);
}

/*
 * The limits object (JSON text) in a few words for a narrow panel: wall
 * time, memory, processes, workspace and CPU. NULL if it is not an object.
 */
static const char *
limits_summary(const char *text, char *buf, size_t bufsz, size_t *used)
{
	json_t *j = text != NULL ? json_loads(text, 0, NULL) : NULL;
	char wall[24] = "-", mem[24] = "-", disk[24] = "-";
	const char *v = NULL;
	json_t *x;

	if (!json_is_object(j)) {
		json_decref(j);
		return NULL;
	}
	if (json_is_integer(x = json_object_get(j, "wall_time_s")))
		tui_draw_view_duration(json_integer_value(x) * 1000, wall,
		    sizeof wall);
	if (json_is_integer(x = json_object_get(j, "memory_bytes")))
		human_bytes(json_integer_value(x), mem, sizeof mem);
	if (json_is_integer(x = json_object_get(j, "disk_bytes")))
		human_bytes(json_integer_value(x), disk, sizeof disk);
	x = json_object_get(j, "pids");
	v = fmt(buf, bufsz, used, "wall %s mem %s pids %" PRId64 " disk %s "
	    "cpu %.3g", wall, mem,
	    json_is_integer(x) ? (int64_t)json_integer_value(x) : (int64_t)0,
	    disk, json_number_value(json_object_get(j, "cpu_cores")));
	json_decref(j);
	return v;
}

/*
 * The effective policy (INI text) in a few words: its network allowlist
 * and what a violation does. NULL if the text has no [network] section.
 */
static const char *
policy_summary(const char *text, char *buf, size_t bufsz, size_t *used)
{
	const char *p = text, *e, *allow = NULL, *rec = NULL;
	int alen = 0, rlen = 0;
	bool net = false, seen = false;

	while (p != NULL && *p != '\0') {
		e = strchr(p, '\n');
		int len = e != NULL ? (int)(e - p) : (int)strlen(p);

		if (len > 0 && p[0] == '[') {
			net = len == 9 && strncmp(p, "[network]", 9) == 0;
			seen = seen || net;
		} else if (net && strncmp(p, "allow = ", 8) == 0) {
			allow = p + 8;
			alen = len - 8;
		} else if (net && strncmp(p, "on_egress_violation = ", 22) == 0) {
			rec = p + 22;
			rlen = len - 22;
		}
		p = e != NULL ? e + 1 : NULL;
	}
	if (!seen)
		return NULL;
	if (allow == NULL || alen <= 0)
		return fmt(buf, bufsz, used, "no network");
	return fmt(buf, bufsz, used, "allow %.*s%s%.*s", alen, allow,
	    rec != NULL ? "; violation: " : "", rec != NULL ? rlen : 0,
	    rec != NULL ? rec : "");
}

size_t
tui_view_detail(const struct lease_record *r, const char *title,
    const char *lost, struct tui_kv *kv, size_t max, char *buf,
    size_t bufsz)
{
	const char *v;
	size_t n = 0, used = 0;

	assert(r != NULL && (kv != NULL || max == 0) && buf != NULL);
#define KV(k, val)                                                        \
	do {                                                              \
		if (n < max) {                                            \
			kv[n].key = (k);                                  \
			kv[n].value = or_dash(val);                       \
			n++;                                              \
		}                                                         \
	} while (0)
	/* Most telling first: the panel may be only a dozen rows high. */
	v = fmt(buf, bufsz, &used, "%s%s%s, cleanup %s",
	    lease_fsm_state_name(r->state), r->failed_reason ? ": " : "",
	    r->failed_reason ? r->failed_reason : "",
	    lease_fsm_cleanup_name(r->cleanup));
	KV("state", v);
	if (lost != NULL)
		KV("lost", lost);
	KV("title", title);
	if (r->base != NULL)
		v = fmt(buf, bufsz, &used, "%.12s%s%s%s", r->base,
		    r->base_ref ? " (" : "", r->base_ref ? r->base_ref : "",
		    r->base_ref ? ")" : "");
	else
		v = NULL;
	KV("base", v);
	KV("branch", r->branch);
	KV("worktree", r->worktree);
	KV("sandbox", r->sandbox_id);
	if (r->isolation != NULL && r->adapter != NULL &&
	    strcmp(r->isolation, r->adapter) != 0)
		v = fmt(buf, bufsz, &used, "%s (%s)", r->adapter,
		    r->isolation);
	else
		v = r->adapter != NULL ? r->adapter : r->isolation;
	KV("adapter", v);
	/* Summaries; `corral show` prints both in full. */
	v = policy_summary(r->policy, buf, bufsz, &used);
	KV("policy", v != NULL ? v : r->policy);
	v = limits_summary(r->limits, buf, bufsz, &used);
	KV("limits", v != NULL ? v : r->limits);
	/* what its model requests cost (SPEC 8.5), when it made any */
	if (r->usage.requests > 0 || r->usage.cost_unknown > 0) {
		char usd[24];

		tui_draw_cost(r->usage.requests, r->usage.cost_nano,
		    r->usage.cost_unknown, usd, sizeof usd);
		v = fmt(buf, bufsz, &used, "%s, %" PRId64 " request%s, %"
		    PRId64 " tokens in, %" PRId64 " out%s", usd,
		    r->usage.requests, r->usage.requests == 1 ? "" : "s",
		    r->usage.input + r->usage.cache_read +
		    r->usage.cache_write, r->usage.output,
		    r->usage.cost_unknown > 0 ? " (+: some of unknown cost)" :
		    "");
		KV("cost", v);
	}
	if (r->receipt_len > 0)
		v = fmt(buf, bufsz, &used, "%" PRId64 " entr%s, head %.16s",
		    r->receipt_len, r->receipt_len == 1 ? "y" : "ies",
		    r->receipt_head);
	else
		v = NULL;
	KV("receipt", v);
	KV("workspace", r->workspace);
	KV("id", r->id);
#undef KV
	return n;
}

bool
tui_view_progress(const struct lease_record *r, int64_t now_ms, char *buf,
    size_t bufsz)
{
	char d[16];
	json_t *res;
	bool checks = false;

	assert(r != NULL && buf != NULL && bufsz > 0);
	buf[0] = '\0';
	if (r->state == LEASE_STATE_PROVISIONING) {
		tui_draw_view_duration(now_ms - r->updated_at, d, sizeof d);
		snprintf(buf, bufsz, "provisioning (seeding)... %s", d);
		return true;
	}
	if (r->state != LEASE_STATE_RESULT_READY || r->result == NULL)
		return false;
	/* a result commit whose checks have not reported yet */
	res = json_loads(r->result, 0, NULL);
	checks = json_string_value(json_object_get(res, "commit")) != NULL &&
	    !json_is_array(json_object_get(res, "checks")) &&
	    json_string_value(json_object_get(res, "status")) != NULL &&
	    strcmp(json_string_value(json_object_get(res, "status")),
	    "ready") == 0;
	json_decref(res);
	if (!checks)
		return false;
	tui_draw_view_duration(now_ms - r->updated_at, d, sizeof d);
	snprintf(buf, bufsz, "running checks... %s", d);
	return true;
}
