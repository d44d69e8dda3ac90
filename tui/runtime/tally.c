/*
 * tally.c: a lease's budget of journal lines its agent can cause (issue
 * 15): the first entries of each kind are written, the rest only counted,
 * and the counts go in one summary entry at the end, so an agent that
 * repeats what makes an entry (a reply the holder drops, an activity
 * change) cannot grow the journal without bound. A tally may also carry
 * a rate, so that what it lets through cannot come as a burst of
 * transactions that keeps every other writer of the journal waiting
 * (a flood of refused egress held `corral new` off past its busy
 * timeout). The caller writes; only tui_tally_admit reads a clock.
 */
#include <string.h>

#include <jansson.h>

#include "lease/lease.h"
#include "tui/runtime/runtime.h"

void
tui_tally_init(struct tui_tally *t, unsigned per_kind)
{
	memset(t, 0, sizeof *t);
	t->per_kind = per_kind;
}

void
tui_tally_set_rate(struct tui_tally *t, unsigned burst, unsigned per_sec)
{
	t->burst = burst;
	t->per_sec = per_sec;
	t->tokens = (unsigned long long)burst * 1000;
	t->last_ms = 0;
}

/* The token bucket: one line costs 1000. */
static bool
rate_take(struct tui_tally *t, unsigned long long now_ms)
{
	unsigned long long full = (unsigned long long)t->burst * 1000;

	if (t->per_sec == 0)
		return true;
	if (t->last_ms != 0 && now_ms > t->last_ms) {
		unsigned long long dt = now_ms - t->last_ms;

		t->tokens = dt >= full / t->per_sec + 1 ? full :
		    t->tokens + dt * t->per_sec;
		if (t->tokens > full)
			t->tokens = full;
	}
	if (t->last_ms == 0 || now_ms > t->last_ms)
		t->last_ms = now_ms;
	if (t->tokens < 1000)
		return false;
	t->tokens -= 1000;
	return true;
}

bool
tui_tally_admit(struct tui_tally *t, const char *kind)
{
	return tui_tally_admit_at(t, kind, t->per_sec != 0 ?
	    lease_mono_ms() : 0);
}

bool
tui_tally_admit_at(struct tui_tally *t, const char *kind,
    unsigned long long now_ms)
{
	struct tui_tally_kind *k = NULL;
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->v[i].kind, kind) == 0) {
			k = &t->v[i];
			break;
		}
	if (k == NULL) {
		if (t->n == TUI_TALLY_KINDS ||
		    strlen(kind) >= sizeof t->v[0].kind) {
			t->other++;	/* a kind past the table: counted */
			return false;
		}
		k = &t->v[t->n++];
		memcpy(k->kind, kind, strlen(kind) + 1);
	}
	if (k->recorded >= t->per_kind || !rate_take(t, now_ms)) {
		k->unrecorded++;
		return false;
	}
	k->recorded++;
	return true;
}

unsigned long long
tui_tally_total_unrecorded(const struct tui_tally *t)
{
	unsigned long long n = t->other;

	for (size_t i = 0; i < t->n; i++)
		n += t->v[i].unrecorded;
	return n;
}

int
tui_tally_add_json(const struct tui_tally *t, struct json_t *o)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].unrecorded > 0 && json_object_set_new(o,
		    t->v[i].kind, json_integer((json_int_t)
		    t->v[i].unrecorded)) < 0)
			return -1;
	if (t->other > 0 && json_object_set_new(o, "other",
	    json_integer((json_int_t)t->other)) < 0)
		return -1;
	return 0;
}
