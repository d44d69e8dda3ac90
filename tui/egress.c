/*
 * egress.c: a lease's egress decisions counted from its receipt entries
 * (issue 21, SPEC 8.4), for `corral review`, `corral show` and the
 * console's review: how many connections its proxy allowed and denied,
 * and the first denied targets (which came from the sandbox: escape them
 * where shown, SPEC 4.7).
 */
#include <string.h>

#include <jansson.h>

#include "tui/tui.h"

bool
tui_egress_count(struct json_t *receipts, struct tui_egress *out)
{
	json_t *e, *fl, *sum = NULL;
	const char *kind, *v;
	size_t i;

	memset(out, 0, sizeof *out);
	json_array_foreach(receipts, i, e) {
		kind = json_string_value(json_object_get(e, "kind"));
		fl = json_object_get(e, "fields");
		if (kind == NULL)
			continue;
		if (strcmp(kind, "egress_proxy") == 0) {
			out->proxy = true;
		} else if (strcmp(kind, "egress_summary") == 0) {
			sum = fl;
		} else if (strcmp(kind, "egress") == 0) {
			v = json_string_value(json_object_get(fl, "verdict"));
			if (v != NULL && strcmp(v, "allow") == 0) {
				out->allowed++;
				continue;
			}
			out->denied++;
			v = json_string_value(json_object_get(fl, "target"));
			if (v != NULL && out->ntargets < TUI_EGRESS_TARGETS)
				out->targets[out->ntargets++] = v;
		}
	}
	/* the teardown's totals count what a long receipt list left out */
	if (json_is_integer(json_object_get(sum, "allowed")))
		out->allowed = json_integer_value(json_object_get(sum,
		    "allowed"));
	if (json_is_integer(json_object_get(sum, "denied")))
		out->denied = json_integer_value(json_object_get(sum,
		    "denied"));
	return out->proxy || sum != NULL || out->allowed > 0 ||
	    out->denied > 0;
}

bool
tui_egress_line(FILE *f, struct json_t *receipts, const char *prefix)
{
	struct tui_egress eg;

	if (!tui_egress_count(receipts, &eg))
		return false;
	if (f == NULL)
		return true;
	fprintf(f, "%s%lld allowed, %lld denied", prefix, eg.allowed,
	    eg.denied);
	for (size_t i = 0; i < eg.ntargets; i++) {
		fputs(i == 0 ? " (" : ", ", f);
		tui_ctx_put_escaped(f, eg.targets[i], strlen(eg.targets[i]));
	}
	if (eg.ntargets > 0)
		fprintf(f, "%s)", eg.denied > (long long)eg.ntargets ? ", ..." :
		    "");
	fputs("\n", f);
	return true;
}
