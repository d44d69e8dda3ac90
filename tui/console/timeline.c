/*
 * timeline.c: the morning look (issue 9): each lease's activity states
 * over time, from the journal's transitions (`corral events --json`),
 * bucketed into the columns of a bar, and the time each lease spent
 * blocked waiting on the operator. Pure: no terminal, no I/O.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "tui/console/console.h"

void
tui_timeline_init(struct tui_timeline *tl)
{
	assert(tl != NULL);
	memset(tl, 0, sizeof *tl);
}

void
tui_timeline_free(struct tui_timeline *tl)
{
	if (tl == NULL)
		return;
	for (size_t i = 0; i < tl->n; i++) {
		free(tl->l[i].at);
		free(tl->l[i].state);
	}
	free(tl->l);
	memset(tl, 0, sizeof *tl);
}

const struct tui_tl_lease *
tui_timeline_find(const struct tui_timeline *tl, const char *id)
{
	assert(tl != NULL && id != NULL);
	for (size_t i = 0; i < tl->n; i++)
		if (strcmp(tl->l[i].id, id) == 0)
			return &tl->l[i];
	return NULL;
}

static struct tui_tl_lease *
get(struct tui_timeline *tl, const char *id, int *err)
{
	struct tui_tl_lease *l = (struct tui_tl_lease *)tui_timeline_find(tl,
	    id);

	*err = 0;
	if (l != NULL)
		return l;
	if (strlen(id) >= sizeof l->id || tl->n >= TUI_TIMELINE_MAX_LEASES) {
		*err = -E2BIG;
		return NULL;
	}
	if (tl->n == tl->cap) {
		size_t cap = tl->cap ? tl->cap * 2 : 16;

		if ((l = realloc(tl->l, cap * sizeof *l)) == NULL) {
			*err = -ENOMEM;
			return NULL;
		}
		tl->l = l;
		tl->cap = cap;
	}
	l = &tl->l[tl->n++];
	memset(l, 0, sizeof *l);
	memcpy(l->id, id, strlen(id) + 1);
	return l;
}

int
tui_timeline_add(struct tui_timeline *tl, const char *id, int64_t at_ms,
    enum tui_activity a)
{
	struct tui_tl_lease *l;
	size_t i;
	int err;

	assert(tl != NULL && id != NULL);
	if ((l = get(tl, id, &err)) == NULL)
		return err;
	if (l->n == 0 || at_ms < l->first_ms)
		l->first_ms = at_ms;
	if (tl->oldest_ms == 0 || at_ms < tl->oldest_ms)
		tl->oldest_ms = at_ms;
	if (l->n >= TUI_TIMELINE_MAX_SPANS)
		return -E2BIG;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		int64_t *at = realloc(l->at, cap * sizeof *at);
		uint8_t *st;

		if (at == NULL)
			return -ENOMEM;
		l->at = at;
		if ((st = realloc(l->state, cap * sizeof *st)) == NULL)
			return -ENOMEM;
		l->state = st;
		l->cap = cap;
	}
	/* keep them in time order (the journal gives them in order) */
	for (i = l->n; i > 0 && l->at[i - 1] > at_ms; i--) {
		l->at[i] = l->at[i - 1];
		l->state[i] = l->state[i - 1];
	}
	l->at[i] = at_ms;
	l->state[i] = (uint8_t)a;
	l->n++;
	return 0;
}

void
tui_timeline_end(struct tui_timeline *tl, const char *id, int64_t at_ms)
{
	struct tui_tl_lease *l;
	int err;

	assert(tl != NULL && id != NULL);
	if ((l = get(tl, id, &err)) == NULL)
		return;
	if (l->n == 0 && l->first_ms == 0)
		l->first_ms = at_ms;
	if (!l->ended || at_ms > l->end_ms)
		l->end_ms = at_ms;
	l->ended = true;
}

static bool
final_state(const char *s)
{
	static const char *const fin[] = { "applied", "rejected", "failed",
		"cancelled" };

	for (size_t i = 0; i < sizeof fin / sizeof fin[0]; i++)
		if (strcmp(s, fin[i]) == 0)
			return true;
	return false;
}

int
tui_timeline_add_json(struct tui_timeline *tl, const char *line,
    size_t len)
{
	json_t *o;
	const char *id, *kind, *to;
	enum tui_activity a;
	int64_t at;
	int rc = 0;

	assert(tl != NULL);
	if ((o = json_loadb(line, len, 0, NULL)) == NULL)
		return 0;
	id = json_string_value(json_object_get(o, "id"));
	kind = json_string_value(json_object_get(o, "kind"));
	to = json_string_value(json_object_get(o, "to"));
	at = (int64_t)json_integer_value(json_object_get(o, "at"));
	if (id == NULL || kind == NULL || to == NULL || at <= 0) {
		json_decref(o);
		return 0;
	}
	if (strcmp(kind, "activity") == 0) {
		a = tui_activity_from_name(to);
		if (a != TUI_ACTIVITY_UNKNOWN)
			rc = tui_timeline_add(tl, id, at, a);
	} else if (strcmp(kind, "lease") == 0 && final_state(to)) {
		tui_timeline_end(tl, id, at);
	}
	json_decref(o);
	return rc;
}

/* Ties and short blocked moments: what the operator must see first. */
static int
weight(enum tui_activity a)
{
	switch (a) {
	case TUI_ACTIVITY_BLOCKED:
		return 5;
	case TUI_ACTIVITY_FAILED:
		return 4;
	case TUI_ACTIVITY_WORKING:
		return 3;
	case TUI_ACTIVITY_PROMPT:
		return 2;
	case TUI_ACTIVITY_UNKNOWN:
		return 0;
	default:
		return 1;
	}
}

void
tui_timeline_bucket(const struct tui_tl_lease *l, int64_t from_ms,
    int64_t to_ms, uint8_t *cols, int ncols)
{
	int64_t span, b0, b1, t0, t1, end, dur[TUI_ACTIVITY_COUNT];
	size_t i;
	int c, best;

	assert(l != NULL && cols != NULL);
	if (ncols <= 0)
		return;
	span = to_ms > from_ms ? to_ms - from_ms : 1;
	end = l->ended ? l->end_ms : to_ms;
	for (c = 0; c < ncols; c++) {
		b0 = from_ms + span * c / ncols;
		b1 = from_ms + span * (c + 1) / ncols;
		memset(dur, 0, sizeof dur);
		for (i = 0; i < l->n; i++) {
			t0 = l->at[i];
			t1 = i + 1 < l->n ? l->at[i + 1] : end;
			if (t1 > end)
				t1 = end;
			/* a state journaled just after the end (the activity
			 * "failed" after the lease's transition): an instant
			 * at its time, so a failure shows F, not "." */
			if (t1 < l->at[i])
				t1 = l->at[i];
			if (t0 < b0)
				t0 = b0;
			if (t1 > b1)
				t1 = b1;
			/* an instant (a state that lasted 0 ms here) counts */
			if (t1 > t0 || (t1 == t0 && l->at[i] >= b0 &&
			    l->at[i] < b1))
				dur[l->state[i]] += t1 - t0 + 1;
		}
		best = TUI_ACTIVITY_UNKNOWN;
		for (int a = 0; a < TUI_ACTIVITY_COUNT; a++) {
			if (dur[a] == 0)
				continue;
			if (best == TUI_ACTIVITY_UNKNOWN || dur[a] > dur[best] ||
			    (dur[a] == dur[best] && weight(a) > weight(best)))
				best = a;
		}
		if (dur[TUI_ACTIVITY_BLOCKED] > 0)
			best = TUI_ACTIVITY_BLOCKED;
		cols[c] = (uint8_t)best;
	}
}

int64_t
tui_timeline_state_ms(const struct tui_tl_lease *l, enum tui_activity a,
    int64_t now_ms)
{
	int64_t sum = 0, t1, end;

	assert(l != NULL);
	end = l->ended && l->end_ms < now_ms ? l->end_ms : now_ms;
	for (size_t i = 0; i < l->n; i++) {
		if (l->state[i] != (uint8_t)a)
			continue;
		t1 = i + 1 < l->n ? l->at[i + 1] : end;
		if (t1 > end)
			t1 = end;
		if (t1 > l->at[i])
			sum += t1 - l->at[i];
	}
	return sum;
}

int64_t
tui_timeline_blocked_ms(const struct tui_tl_lease *l, int64_t now_ms)
{
	return tui_timeline_state_ms(l, TUI_ACTIVITY_BLOCKED, now_ms);
}
