/*
 * tally.c: a lease's budget of journal lines its agent can cause (issue
 * 15): the first entries of each kind are written, the rest only counted,
 * and the counts go in one summary entry at the end, so an agent that
 * repeats what makes an entry (a reply the holder drops, an activity
 * change) cannot grow the journal without bound. Pure: the caller writes.
 */
#include <string.h>

#include <jansson.h>

#include "tui/runtime/runtime.h"

void
tui_tally_init(struct tui_tally *t, unsigned per_kind)
{
	memset(t, 0, sizeof *t);
	t->per_kind = per_kind;
}

bool
tui_tally_admit(struct tui_tally *t, const char *kind)
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
	if (k->recorded >= t->per_kind) {
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
