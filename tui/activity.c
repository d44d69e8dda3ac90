/*
 * activity.c: names and badge letters of the activity states (SPEC 5.2)
 * as the console shows them: a colour plus a letter, so a badge reads
 * without colour too.
 */
#include <string.h>

#include "tui/tui.h"

static const struct {
	const char *name;
	char letter;
} activities[TUI_ACTIVITY_COUNT] = {
	[TUI_ACTIVITY_UNKNOWN] = { "unknown", '?' },
	[TUI_ACTIVITY_STARTING] = { "starting", 'S' },
	[TUI_ACTIVITY_WORKING] = { "working", 'W' },
	[TUI_ACTIVITY_PROMPT] = { "prompt", 'P' },
	[TUI_ACTIVITY_BLOCKED] = { "blocked", 'B' },
	[TUI_ACTIVITY_DONE] = { "done", 'D' },
	[TUI_ACTIVITY_FAILED] = { "failed", 'F' },
	[TUI_ACTIVITY_CANCELLED] = { "cancelled", 'C' },
	[TUI_ACTIVITY_LOST] = { "lost", 'L' },
};

enum tui_activity
tui_activity_from_name(const char *name)
{
	int i;

	if (name == NULL)
		return TUI_ACTIVITY_UNKNOWN;
	for (i = 0; i < TUI_ACTIVITY_COUNT; i++)
		if (strcmp(name, activities[i].name) == 0)
			return (enum tui_activity)i;
	return TUI_ACTIVITY_UNKNOWN;
}

const char *
tui_activity_name(enum tui_activity a)
{
	if ((unsigned)a >= TUI_ACTIVITY_COUNT)
		a = TUI_ACTIVITY_UNKNOWN;
	return activities[a].name;
}

char
tui_activity_letter(enum tui_activity a)
{
	if ((unsigned)a >= TUI_ACTIVITY_COUNT)
		a = TUI_ACTIVITY_UNKNOWN;
	return activities[a].letter;
}
