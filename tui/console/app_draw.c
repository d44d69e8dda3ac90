/*
 * app_draw.c: one frame of the console (STYLE E): the parts the redraw
 * throttle says are dirty, drawn through draw.c onto the curses surface,
 * then one flush. Only the focused pane is drawn, from its screen model
 * or scrollback cache (SPEC 4.7); background leases are a list row each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tui/console/console_int.h"

#define DRAW_MAXCOLS 1000	/* the widest screen a holder keeps */

void
tui_app_draw_relayout(struct tui_app *a)
{
	const struct tui_surface *sf = a->draw.surface;
	struct tui_layout_in in;
	int w = 0, h = 0;

	sf->ops->size(sf->ud, &w, &h);
	memset(&in, 0, sizeof in);
	in.w = w;
	in.h = h;
	in.nleases = a->n;
	in.detail = a->detail;
	in.zoom = a->zoom;
	in.help = a->help;
	tui_layout_compute(&in, &a->lay);
	a->relayout = false;
}

static enum tui_activity
activity(const struct tui_session *s)
{
	return tui_view_activity(&s->rec, s->lost, s->exited, s->exit_status,
	    s->cancelled, s->activity);
}

static void
draw_list(struct tui_app *a)
{
	const struct tui_rect *r = &a->lay.list;
	struct tui_lease_row *rows;
	int64_t now = lease_id_now_ms();
	long sel = tui_app_focus_index(a);
	char (*prog)[96], (*cost)[24];

	if (tui_layout_rect_empty(r))
		return;
	if ((rows = calloc(a->n ? a->n : 1, sizeof *rows)) == NULL ||
	    (prog = calloc(a->n ? a->n : 1, sizeof *prog)) == NULL ||
	    (cost = calloc(a->n ? a->n : 1, sizeof *cost)) == NULL)
		tui_fatal("out of memory");
	for (size_t i = 0; i < a->n; i++) {
		const struct tui_session *s = a->s[i];
		struct tui_lease_row *row = &rows[i];

		row->id = s->id;
		row->name = s->rec.name;
		row->activity = activity(s);
		row->lease_state = lease_fsm_state_name(s->rec.state);
		row->mode = tui_view_mode_label(&s->rec);
		row->mode_long = tui_view_mode_long(&s->rec);
		row->host = s->rec.mode == LEASE_MODE_TRUSTED_LOCAL;
		row->branch = s->rec.branch;
		row->age_s = s->rec.created_at > 0 && now >= s->rec.created_at ?
		    (now - s->rec.created_at) / 1000 : -1;
		row->last_output = s->question != NULL ? s->question :
		    s->last_line != NULL ? s->last_line : s->rec.failed_reason;
		/* a long step shows its progress, not a frozen row */
		if (tui_app_view_progress(a, s, prog[i], sizeof prog[i]))
			row->last_output = prog[i];
		row->lost_reason = s->lost_reason;
		/* what its model requests cost (SPEC 8.5), when it made any */
		if (tui_draw_cost(s->rec.usage.requests, s->rec.usage.cost_nano,
		    s->rec.usage.cost_unknown, cost[i], sizeof cost[i]))
			row->cost = cost[i];
		row->unseen = s->rec.unseen || s->bell_badge;
	}
	a->list_top = tui_draw_list_top(a->n, sel < 0 ? 0 : (size_t)sel, r->h,
	    a->list_top);
	tui_draw_list(&a->draw, r, rows, a->n, sel < 0 ? (size_t)-1 :
	    (size_t)sel, a->list_top);
	free(cost);
	free(prog);
	free(rows);
}

static void
draw_detail(struct tui_app *a)
{
	const struct tui_rect *r = &a->lay.detail;
	struct tui_session *s = tui_app_focused(a);
	struct tui_kv kv[TUI_VIEW_DETAIL_MAX];
	char buf[2048], title[200], keys[9][16];
	size_t n;

	if (tui_layout_rect_empty(r))
		return;
	if (s == NULL) {
		tui_draw_detail(&a->draw, r, "no lease focused", NULL, 0);
		return;
	}
	n = 0;
	/* blocked on a choice: what it asks, and the keys that answer it */
	if (s->question != NULL) {
		kv[n++] = (struct tui_kv){ "question", s->question };
		for (unsigned i = 0; i < s->nopts && n < TUI_VIEW_DETAIL_MAX -
		    4; i++) {
			snprintf(keys[i], sizeof keys[i], "key %u", i + 1);
			kv[n++] = (struct tui_kv){ keys[i], s->opt[i] };
		}
	}
	n += tui_view_detail(&s->rec, s->title, s->lost ? s->lost_reason :
	    NULL, kv + n, TUI_VIEW_DETAIL_MAX - n, buf, sizeof buf);
	if (strcmp(tui_app_name(s), s->id) != 0)
		snprintf(title, sizeof title, "%.128s  %s", tui_app_name(s),
		    s->id);
	else
		snprintf(title, sizeof title, "%s", s->id);
	tui_draw_detail(&a->draw, r, title, kv, n);
}

/* The pane when there is no screen to show. */
static void
draw_placeholder(struct tui_app *a, struct tui_session *s)
{
	const struct tui_rect *r = &a->lay.pane;
	struct tui_style st;
	char text[256];

	tui_theme_style(&a->theme, TUI_EL_LIST_DIM, &st);
	st.fg = tui_theme_degrade(st.fg, a->draw.colors);
	st.bg = tui_theme_degrade(st.bg, a->draw.colors);
	tui_draw_fill(&a->draw, r, &st);
	if (s == NULL && a->n == 0)
		snprintf(text, sizeof text, " no leases yet: start one with "
		    "'corral new -- CMD'");
	else if (s == NULL)
		snprintf(text, sizeof text, " no lease focused: j/k picks one");
	else if (s->lost)
		snprintf(text, sizeof text, " lost: %s", s->lost_reason);
	else if (tui_view_needs_holder(&s->rec) && !s->exited)
		snprintf(text, sizeof text, " connecting to %s...",
		    tui_app_name(s));
	else
		snprintf(text, sizeof text, " %s has ended (%s); no screen "
		    "was kept", tui_app_name(s),
		    lease_fsm_state_name(s->rec.state));
	tui_draw_text(&a->draw, r->x, r->y, r->w, text, &st, TUI_TEXT_PAD);
}

/* Browsing: scrollback lines from the cache, then the live rows. */
static void
draw_scrolled(struct tui_app *a, struct tui_session *s, int first, int last)
{
	const struct tui_rect *r = &a->lay.pane;
	struct pty_cell *cells;
	bool rev = (s->m.meta.modes & PTY_WMODE_REVERSE) != 0;
	int maxc = r->w < DRAW_MAXCOLS ? r->w : DRAW_MAXCOLS, n, row;
	size_t sb;

	if ((cells = malloc(sizeof *cells * (size_t)maxc)) == NULL)
		tui_fatal("out of memory");
	for (int y = first; y <= last; y++) {
		if (tui_view_scroll_source(&a->scroll, y, &sb, &row)) {
			n = tui_view_sbcache_line(&a->sb, sb, cells, maxc);
			tui_draw_cells(&a->draw, r->x, r->y + y, r->w,
			    n < 0 ? NULL : cells, n < 0 ? 0 : n, rev);
		} else if (row < s->m.rows && s->m.cells != NULL) {
			tui_draw_cells(&a->draw, r->x, r->y + y, r->w,
			    s->m.cells + (size_t)row * (size_t)s->m.cols,
			    s->m.cols, rev);
		} else {
			tui_draw_cells(&a->draw, r->x, r->y + y, r->w, NULL,
			    0, rev);
		}
	}
	free(cells);
}

/* A dead pane says so, and how its agent ended (issue 21). */
static void
draw_ended(struct tui_app *a, const struct tui_session *s)
{
	char tag[96];
	bool bad = false;

	if (!s->exited && !s->m.exited && tui_view_needs_holder(&s->rec))
		return;
	if (s->cancelled || s->rec.state == LEASE_STATE_CANCELLED)
		snprintf(tag, sizeof tag, " ended: cancelled ");
	else if (s->exited && WIFSIGNALED(s->exit_status)) {
		snprintf(tag, sizeof tag, " ended: killed by signal %d ",
		    WTERMSIG(s->exit_status));
		bad = true;
	} else if (s->exited) {
		bad = WEXITSTATUS(s->exit_status) != 0;
		snprintf(tag, sizeof tag, " ended: exit %d ",
		    WEXITSTATUS(s->exit_status));
	} else {
		bad = s->rec.state == LEASE_STATE_FAILED;
		snprintf(tag, sizeof tag, " ended: %s%s%.40s ",
		    lease_fsm_state_name(s->rec.state), s->rec.failed_reason ?
		    " " : "", s->rec.failed_reason ? s->rec.failed_reason : "");
	}
	tui_draw_pane_tag(&a->draw, &a->lay.pane, tag, bad);
}

static void
draw_pane(struct tui_app *a, int first, int last)
{
	const struct tui_rect *r = &a->lay.pane;
	struct tui_session *s = tui_app_focused(a);

	if (tui_layout_rect_empty(r))
		return;
	if (first < 0 || last < first) {
		first = 0;
		last = r->h - 1;
	}
	if (last > r->h - 1)
		last = r->h - 1;
	if (s == NULL || !s->have_screen) {
		draw_placeholder(a, s);
		return;
	}
	if (a->scroll.offset == 0)
		tui_draw_pane(&a->draw, r, &s->m, first, last);
	else
		draw_scrolled(a, s, first, last);
	if (last == r->h - 1)
		draw_ended(a, s);
	if (a->scroll.offset > 0 || a->keys.mode == TUI_MODE_SCROLL)
		tui_draw_scroll_tag(&a->draw, r, a->scroll.offset,
		    a->scroll.total);
}

static void
draw_status(struct tui_app *a)
{
	struct tui_session *f = tui_app_focused(a);
	struct tui_status st;
	char hints[256], cost[32];
	int64_t requests = 0, nano = 0, unknown = 0;

	memset(&st, 0, sizeof st);
	st.mode = a->keys.mode;
	st.focus = f != NULL ? tui_app_name(f) : NULL;
	tui_keys_hints(&a->keys, hints, sizeof hints);
	st.hints = hints;
	if (a->msg[0] != '\0') {
		st.message = a->msg;
		st.error = a->msg_err || a->keys.mode == TUI_MODE_CONFIRM;
	}
	for (size_t i = 0; i < a->n; i++) {
		st.counts[activity(a->s[i])]++;
		st.attention += tui_app_needs_operator(a->s[i]);
		requests += a->s[i]->rec.usage.requests;
		nano += a->s[i]->rec.usage.cost_nano;
		unknown += a->s[i]->rec.usage.cost_unknown;
	}
	/* the cost of the leases listed, together (SPEC 8.5) */
	if (tui_draw_cost(requests, nano, unknown, cost, sizeof cost))
		st.cost = cost;
	tui_draw_status(&a->draw, &a->lay.status, &st);
}

static void
draw_rules(struct tui_app *a)
{
	struct tui_session *f = tui_app_focused(a);
	char label[PTY_SCREEN_TITLE_MAX + 160];

	tui_draw_rule(&a->draw, &a->lay.sep_v, NULL);
	if (tui_layout_rect_empty(&a->lay.sep_h))
		return;
	label[0] = '\0';
	if (f != NULL)
		snprintf(label, sizeof label, "%s%s%s", tui_app_name(f),
		    f->title != NULL && f->title[0] != '\0' ? ": " : "",
		    f->title != NULL ? f->title : "");
	tui_draw_rule(&a->draw, &a->lay.sep_h, label);
}

static void
draw_cursor(struct tui_app *a)
{
	struct tui_session *f = tui_app_focused(a);
	const struct tui_rect *r = &a->lay.pane;
	const struct tui_surface *sf = a->draw.surface;
	bool show;

	if (f == NULL || !f->have_screen || tui_layout_rect_empty(r)) {
		sf->ops->set_cursor(sf->ud, r->x, r->y, false);
		return;
	}
	show = a->scroll.offset == 0 && !a->help &&
	    (a->keys.mode == TUI_MODE_NORMAL ||
	    a->keys.mode == TUI_MODE_TYPING || a->keys.mode ==
	    TUI_MODE_PREFIX);
	tui_draw_cursor(&a->draw, r, &f->m, show);
}

void
tui_app_draw_frame(struct tui_app *a, const struct tui_redraw_set *set)
{
	const struct tui_surface *sf = a->draw.surface;
	unsigned what = set->what;
	int first = set->pane_first, last = set->pane_last;
	struct tui_rect body;
	int w = 0, h = 0;

	if (a->view != TUI_VIEW_NONE && what != 0) {
		/* a view takes the body; the status line stays */
		if (what & TUI_DIRTY_ALL) {
			tui_app_draw_relayout(a);
			sf->ops->clear(sf->ud);
		}
		sf->ops->size(sf->ud, &w, &h);
		body = (struct tui_rect){ 0, 0, w, h > 1 ? h - 1 : 0 };
		tui_app_view_draw(a, &body);
		draw_status(a);
		if (a->help)
			tui_draw_help(&a->draw, &a->lay.help, &a->keys);
		sf->ops->set_cursor(sf->ud, 0, 0, false);
		tui_surface_curses_flush(a->cur);
		return;
	}
	if (what & TUI_DIRTY_ALL) {
		tui_app_draw_relayout(a);
		sf->ops->clear(sf->ud);
		what |= TUI_DIRTY_LIST | TUI_DIRTY_DETAIL | TUI_DIRTY_PANE |
		    TUI_DIRTY_STATUS;
		first = -1;
		draw_rules(a);
	} else if ((what & TUI_DIRTY_DETAIL) &&
	    !tui_layout_rect_empty(&a->lay.sep_h)) {
		draw_rules(a);	/* the label carries the title */
	}
	if (what & TUI_DIRTY_LIST)
		draw_list(a);
	if (what & TUI_DIRTY_DETAIL)
		draw_detail(a);
	if (what & TUI_DIRTY_PANE)
		draw_pane(a, first, last);
	if (what & TUI_DIRTY_STATUS)
		draw_status(a);
	if (a->help && what != 0)
		tui_draw_help(&a->draw, &a->lay.help, &a->keys);
	draw_cursor(a);
	tui_surface_curses_flush(a->cur);
}
