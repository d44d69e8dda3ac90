/*
 * redraw.c: the redraw throttle (STYLE E): callbacks only mark what is
 * dirty; one timer draws at most every interval (~60 fps) for output,
 * while a frame caused by a keystroke, and the echo that follows it, are
 * drawn at once. Time comes in as now_ms so tests need no loop.
 */
#include <assert.h>
#include <string.h>

#include "tui/console/console.h"

void
tui_redraw_init(struct tui_redraw *r, unsigned interval_ms)
{
	assert(r != NULL);
	memset(r, 0, sizeof *r);
	r->interval_ms = interval_ms != 0 ? interval_ms :
	    TUI_REDRAW_INTERVAL_MS;
	r->pane_first = -1;
	r->pane_last = -1;
}

void
tui_redraw_mark(struct tui_redraw *r, uint64_t now_ms, unsigned what,
    bool urgent)
{
	assert(r != NULL);
	if (what == 0 && !urgent)
		return;
	r->what |= what;
	if (urgent) {
		r->urgent = true;
		r->echo_until_ms = now_ms + TUI_REDRAW_ECHO_MS;
	}
}

void
tui_redraw_mark_rows(struct tui_redraw *r, uint64_t now_ms, int first,
    int last)
{
	assert(r != NULL);
	if (first < 0)
		first = 0;
	if (last < first)
		return;
	if (!(r->what & TUI_DIRTY_PANE) || r->pane_first < 0) {
		r->pane_first = first;
		r->pane_last = last;
	} else {
		if (first < r->pane_first)
			r->pane_first = first;
		if (last > r->pane_last)
			r->pane_last = last;
	}
	tui_redraw_mark(r, now_ms, TUI_DIRTY_PANE, false);
}

/* Output that answers a recent keystroke (its echo) is drawn at once. */
static bool
is_echo(const struct tui_redraw *r, uint64_t now_ms)
{
	return (r->what & TUI_DIRTY_PANE) && now_ms < r->echo_until_ms;
}

enum tui_redraw_verdict
tui_redraw_due(struct tui_redraw *r, uint64_t now_ms, unsigned *wait_ms)
{
	uint64_t elapsed;

	assert(r != NULL);
	if (wait_ms != NULL)
		*wait_ms = 0;
	if (r->what == 0 && !r->urgent)
		return TUI_REDRAW_IDLE;
	if (r->urgent || !r->drawn || is_echo(r, now_ms))
		return TUI_REDRAW_NOW;
	/* a clock that went backwards counts as a full interval */
	elapsed = now_ms >= r->last_draw_ms ? now_ms - r->last_draw_ms :
	    r->interval_ms;
	if (elapsed >= r->interval_ms)
		return TUI_REDRAW_NOW;
	if (r->pending)
		return TUI_REDRAW_PENDING;
	r->pending = true;
	if (wait_ms != NULL)
		*wait_ms = r->interval_ms - (unsigned)elapsed;
	return TUI_REDRAW_ARM;
}

void
tui_redraw_fired(struct tui_redraw *r)
{
	assert(r != NULL);
	r->pending = false;
}

void
tui_redraw_take(struct tui_redraw *r, uint64_t now_ms,
    struct tui_redraw_set *out)
{
	uint64_t elapsed;

	assert(r != NULL && out != NULL);
	elapsed = now_ms >= r->last_draw_ms ? now_ms - r->last_draw_ms :
	    r->interval_ms;
	if (!r->urgent && r->drawn && is_echo(r, now_ms) &&
	    elapsed < r->interval_ms && !(r->what & TUI_DIRTY_ALL) &&
	    (r->what & ~TUI_DIRTY_PANE) != 0) {
		/*
		 * An echo ahead of the interval is the pane's rows alone: the
		 * rest (a busy lease list) keeps its turn, so the echo waits
		 * on no other drawing.
		 */
		out->what = TUI_DIRTY_PANE;
		out->pane_first = r->pane_first;
		out->pane_last = r->pane_last;
		r->what &= ~TUI_DIRTY_PANE;
		r->pane_first = r->pane_last = -1;
		r->echo_until_ms = 0;
		return;
	}
	out->what = r->what;
	out->pane_first = (r->what & TUI_DIRTY_PANE) ? r->pane_first : -1;
	out->pane_last = (r->what & TUI_DIRTY_PANE) ? r->pane_last : -1;
	/* the key's own frame keeps the echo window open; the echo closes it */
	if (!r->urgent && is_echo(r, now_ms))
		r->echo_until_ms = 0;
	r->what = 0;
	r->urgent = false;
	r->pane_first = r->pane_last = -1;
	r->last_draw_ms = now_ms;
	r->drawn = true;
}
