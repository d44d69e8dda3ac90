/*
 * app_act.c: what the console's keys do. keys.c turns a key into an
 * action; this carries it out: move the focus (never typing: SPEC 4.3),
 * type into the focused agent as KEY/UNICHAR frames (the holder encodes
 * them per the agent's modes), browse scrollback (SPEC 4.4), cancel with
 * a confirmation (SPEC 5.5), open the review and timeline views and
 * apply or reject with a confirmation (SPEC 7.4-7.6, app_view.c), toggle
 * panels, quit leaving agents running.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tui/console/console_int.h"

static void
focus_to(struct tui_app *a, long i)
{
	if (a->n == 0)
		return;
	if (i < 0)
		i = 0;
	if (i >= (long)a->n)
		i = (long)a->n - 1;
	if (i == tui_app_focus_index(a))
		return;
	tui_app_focus(a, i);
}

static bool
has_ended(const struct tui_session *s)
{
	return !tui_view_needs_holder(&s->rec) || s->exited || s->m.exited;
}

static void
type_start(struct tui_app *a)
{
	struct tui_session *s = tui_app_focused(a);
	const char *why = NULL;

	if (s == NULL)
		why = "no lease focused";
	else if (has_ended(s))
		why = "the agent has ended";
	else if (s->have_status && !s->control)
		why = "the owner did not allow control (no --allow-control)";
	else if (!tui_conn_is_up(s->live))
		why = s->lost ? s->lost_reason : "not connected yet";
	if (why == NULL)
		return;
	tui_keys_set_mode(&a->keys, TUI_MODE_NORMAL);
	if (s != NULL)
		tui_app_message(a, true, "%s: %s", tui_app_name(s), why);
	else
		tui_app_message(a, true, "%s", why);
}

static void
send_key(struct tui_app *a, const struct tui_act *act)
{
	struct tui_session *s = tui_app_focused(a);
	const struct tui_key *k = &act->key;
	uint8_t p[8];
	uint32_t v;
	uint8_t type;
	int rc = 0;

	if (s == NULL || !tui_conn_is_up(s->live)) {
		tui_keys_set_mode(&a->keys, TUI_MODE_NORMAL);
		tui_app_message(a, true, "not connected: typing stopped");
		return;
	}
	if (k->code == PTY_KEY_NONE) {
		type = PTY_W_UNICHAR;
		v = k->cp;
	} else if (k->code > PTY_KEY_NONE && k->code < PTY_KEY_MAX) {
		type = PTY_W_KEY;
		v = (uint32_t)k->code;
	} else {
		return;		/* a console-only key (wheel, click) */
	}
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
	p[4] = (uint8_t)k->mods;
	p[5] = p[6] = p[7] = 0;
	for (int i = 0; i < (act->arg > 0 ? act->arg : 1) && rc == 0; i++)
		rc = tui_conn_send(s->live, type, p, sizeof p);
	if (rc == -ENOBUFS)
		tui_app_message(a, true, "%s is not reading input",
		    tui_app_name(s));
	/* The echo that follows is drawn at once (STYLE E). */
	tui_app_mark(a, 0, true);
}

static void
scroll(struct tui_app *a, const struct tui_act *act)
{
	struct tui_session *s = tui_app_focused(a);
	long h = a->lay.pane.h > 1 ? a->lay.pane.h : 1, n;

	if (s == NULL || !s->have_screen) {
		tui_keys_set_mode(&a->keys, a->keys.scroll_from);
		tui_app_message(a, false, "no screen to scroll");
		return;
	}
	switch (act->action) {
	case TUI_ACT_SCROLL:
		n = act->unit == TUI_SCROLL_LINE ? 1 :
		    act->unit == TUI_SCROLL_HALF ? (h / 2 > 0 ? h / 2 : 1) : h;
		tui_view_scroll_move(&a->scroll, n * act->arg);
		/* Scrolling down past the live screen leaves scrollback. */
		if (act->arg < 0 && a->scroll.offset == 0)
			tui_keys_set_mode(&a->keys, a->keys.scroll_from);
		break;
	case TUI_ACT_SCROLL_TOP:
		a->scroll.offset = a->scroll.total;
		break;
	case TUI_ACT_SCROLL_BOTTOM:
	case TUI_ACT_SCROLL_EXIT:
		a->scroll.offset = 0;
		break;
	default:
		break;
	}
	tui_app_link_want_scrollback(a);
	tui_app_mark_pane(a);
	tui_app_mark(a, TUI_DIRTY_STATUS, true);
}

static void
confirm_ask(struct tui_app *a, const struct tui_act *act)
{
	struct tui_session *s = tui_app_focused(a);

	if (act->arg == TUI_ACT_APPLY || act->arg == TUI_ACT_REJECT) {
		/* SPEC 7.5, 7.6: the question names what will happen */
		/* refused, or the review opened instead (REVIEW mode) */
		if (!tui_app_view_result_ask(a, (enum tui_action)act->arg) &&
		    a->keys.mode == TUI_MODE_CONFIRM)
			tui_keys_set_mode(&a->keys, a->keys.confirm_from);
		return;
	}
	if (act->arg != TUI_ACT_CANCEL) {
		tui_keys_set_mode(&a->keys, TUI_MODE_NORMAL);
		return;
	}
	if (s == NULL || has_ended(s)) {
		tui_keys_set_mode(&a->keys, TUI_MODE_NORMAL);
		tui_app_message(a, true, "nothing to cancel");
		return;
	}
	if (s->have_status && !s->control) {
		tui_keys_set_mode(&a->keys, TUI_MODE_NORMAL);
		tui_app_message(a, true, "%s: the owner did not allow control "
		    "(no --allow-control)", tui_app_name(s));
		return;
	}
	tui_app_message(a, true, "cancel %s (SIGINT, SIGTERM, SIGKILL)? y/n",
	    tui_app_name(s));
	a->msg_until = 0;	/* until answered */
}

static void
cancel(struct tui_app *a)
{
	struct tui_session *s = tui_app_focused(a);
	struct tui_conn *c;

	if (s == NULL)
		return;
	c = tui_conn_is_up(s->sum) ? s->sum : s->live;
	if (!tui_conn_is_up(c) || tui_conn_send(c, PTY_W_CANCEL, NULL, 0) <
	    0) {
		tui_app_message(a, true, "%s: not connected, not cancelled",
		    tui_app_name(s));
		return;
	}
	tui_app_message(a, false, "cancel sent to %s", tui_app_name(s));
}

/* Tab: the next lease after the focused one that needs the operator. */
static void
select_attention(struct tui_app *a)
{
	long i = tui_app_focus_index(a), k, n = (long)a->n;

	for (k = 1; k <= n; k++) {
		long j = ((i < 0 ? -1 : i) + k) % n;

		if (j != i && tui_app_needs_operator(a->s[j])) {
			focus_to(a, j);
			return;
		}
	}
	tui_app_message(a, false, i >= 0 && tui_app_needs_operator(a->s[i]) ?
	    "no other lease needs you" : "no lease needs you now");
}

/* 1-9 on a blocked lease: ask before answering with that option. */
static void
answer_ask(struct tui_app *a, const struct tui_act *act)
{
	struct tui_session *s = tui_app_focused(a);
	unsigned n = act->arg > 0 ? (unsigned)act->arg : 0;

	if (s == NULL || s->question == NULL || s->qdigest[0] == '\0') {
		tui_keys_set_mode(&a->keys, TUI_MODE_NORMAL);
		if (s == NULL)
			tui_app_message(a, false, "no lease focused");
		else
			tui_app_message(a, false, "%s asks no question (Enter "
			    "types into it)", tui_app_name(s));
		return;
	}
	if (n == 0 || n > s->nopts) {
		tui_keys_set_mode(&a->keys, TUI_MODE_NORMAL);
		tui_app_message(a, true, "%s has %u option%s: keys 1-%u (d "
		    "lists them)", tui_app_name(s), s->nopts, s->nopts == 1 ?
		    "" : "s", s->nopts);
		return;
	}
	tui_app_message(a, true, "answer %s: %s? y/n", tui_app_name(s),
	    s->opt[n - 1]);
	a->msg_until = 0;	/* until answered */
}

static void
click(struct tui_app *a, const struct tui_key *k)
{
	const struct tui_rect *l = &a->lay.list;
	size_t idx;

	/* a view covers the list: a click there selects nothing */
	if (a->view != TUI_VIEW_NONE || !tui_layout_rect_contains(l, k->x,
	    k->y))
		return;
	idx = a->list_top + (size_t)(k->y - l->y);
	if (idx < a->n)
		focus_to(a, (long)idx);
}

void
tui_app_act_key(struct tui_app *a, const struct tui_key *k)
{
	struct tui_act act;
	long i = tui_app_focus_index(a);

	tui_keys_feed(&a->keys, k, &act);
	if (act.mode_changed)
		tui_app_mark(a, TUI_DIRTY_STATUS, true);
	switch (act.action) {
	case TUI_ACT_NONE:
		if (a->keys.mode == TUI_MODE_NORMAL &&
		    k->code == PTY_KEY_NONE && k->mods == 0 &&
		    tui_app_focused(a) != NULL)
			tui_app_message(a, false, "keys go to the agent only "
			    "after Enter or i");
		break;
	case TUI_ACT_MODE:
		tui_app_mark(a, TUI_DIRTY_STATUS, true);
		break;
	case TUI_ACT_QUIT:
		tui_app_quit(a);
		break;
	case TUI_ACT_SELECT_NEXT:
		focus_to(a, i < 0 ? 0 : i + 1);
		break;
	case TUI_ACT_SELECT_PREV:
		focus_to(a, i < 0 ? 0 : i - 1);
		break;
	case TUI_ACT_SELECT_FIRST:
		focus_to(a, 0);
		break;
	case TUI_ACT_SELECT_LAST:
		focus_to(a, (long)a->n - 1);
		break;
	case TUI_ACT_TYPE_START:
		/* one column: what is typed is seen, the pane full width */
		if (a->lay.onecol && !a->zoom) {
			a->zoom = true;
			a->relayout = true;
			tui_app_mark(a, TUI_DIRTY_ALL, true);
		}
		type_start(a);
		tui_app_mark(a, TUI_DIRTY_STATUS, true);
		break;
	case TUI_ACT_SEND_KEY:
		send_key(a, &act);
		break;
	case TUI_ACT_HELP:
		a->help = !a->help;
		a->relayout = true;
		tui_app_mark(a, TUI_DIRTY_ALL, true);
		break;
	case TUI_ACT_DISMISS:
		if (a->help) {
			a->help = false;
			a->relayout = true;
			tui_app_mark(a, TUI_DIRTY_ALL, true);
		}
		a->msg[0] = '\0';
		tui_app_mark(a, TUI_DIRTY_STATUS, true);
		break;
	case TUI_ACT_DETAIL_TOGGLE:
		a->detail = !a->detail;
		a->relayout = true;
		tui_app_mark(a, TUI_DIRTY_ALL, true);
		break;
	case TUI_ACT_ZOOM_TOGGLE:
		a->zoom = !a->zoom;
		a->relayout = true;
		tui_app_mark(a, TUI_DIRTY_ALL, true);
		break;
	case TUI_ACT_SCROLL:
	case TUI_ACT_SCROLL_TOP:
	case TUI_ACT_SCROLL_BOTTOM:
	case TUI_ACT_SCROLL_EXIT:
		scroll(a, &act);
		break;
	case TUI_ACT_CONFIRM_ASK:
		confirm_ask(a, &act);
		tui_app_mark(a, TUI_DIRTY_STATUS, true);
		break;
	case TUI_ACT_CONFIRM_NO:
		tui_app_message(a, false, "not done");
		tui_app_mark(a, TUI_DIRTY_STATUS, true);
		break;
	case TUI_ACT_CANCEL:
		cancel(a);
		tui_app_mark(a, TUI_DIRTY_STATUS, true);
		break;
	case TUI_ACT_REJECT:
	case TUI_ACT_APPLY:
		tui_app_view_result_run(a, act.action);
		tui_app_mark(a, TUI_DIRTY_ALL, true);
		break;
	case TUI_ACT_REVIEW:
		tui_app_view_review_open(a);
		break;
	case TUI_ACT_TIMELINE:
		tui_app_view_timeline_open(a);
		break;
	case TUI_ACT_VIEW_CLOSE:
		tui_app_view_close(a);
		break;
	case TUI_ACT_VIEW_RELOAD:
		tui_app_view_reload(a);
		break;
	case TUI_ACT_VIEW_MOVE:
	case TUI_ACT_VIEW_TOP:
	case TUI_ACT_VIEW_BOTTOM:
	case TUI_ACT_HUNK_NEXT:
	case TUI_ACT_FILE_NEXT:
	case TUI_ACT_HUNK_TOGGLE:
	case TUI_ACT_VIEW_SIDEWAYS:
		tui_app_view_key(a, &act);
		break;
	case TUI_ACT_RESIZE:
		a->want_resize = true;
		break;
	case TUI_ACT_REDRAW:
		tui_surface_curses_invalidate(a->cur);
		a->relayout = true;
		tui_app_mark(a, TUI_DIRTY_ALL, true);
		break;
	case TUI_ACT_CLICK:
		click(a, &act.key);
		break;
	case TUI_ACT_SELECT_ATTENTION:
		select_attention(a);
		break;
	case TUI_ACT_ANSWER_ASK:
		answer_ask(a, &act);
		tui_app_mark(a, TUI_DIRTY_STATUS, true);
		break;
	case TUI_ACT_ANSWER:
		if (tui_app_focused(a) != NULL && act.arg > 0)
			tui_app_view_answer_run(a, tui_app_focused(a),
			    (unsigned)act.arg);
		tui_app_mark(a, TUI_DIRTY_STATUS, true);
		break;
	case TUI_ACT_COUNT:
		break;
	}
	/* A view is open exactly while its mode (or a question from it) is. */
	if (a->view != TUI_VIEW_NONE && !a->quit &&
	    a->keys.mode != TUI_MODE_CONFIRM &&
	    a->keys.mode != TUI_MODE_PREFIX &&
	    a->keys.mode != (a->view == TUI_VIEW_REVIEW ? TUI_MODE_REVIEW :
	    TUI_MODE_TIMELINE))
		tui_app_view_close(a);
}
