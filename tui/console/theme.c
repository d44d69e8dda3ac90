/*
 * theme.c: console themes (SPEC 4.6): the built-in default, theme files
 * in themes/ (`key = value`, read with inih), NO_COLOR, and degrading
 * colours to what the terminal can show (truecolor, 256, 16, 8, none).
 */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tui/console/console.h"

#define IDX(i) PTY_COLOR_INDEXED(i)
#define DEF PTY_COLOR_DEFAULT
#define UL (1u << PTY_ATTR_UNDERLINE_SHIFT)

enum { BLACK, RED, GREEN, YELLOW, BLUE, MAGENTA, CYAN, WHITE, BRIGHT };

static const char *const el_names[TUI_EL_COUNT] = {
	[TUI_EL_LIST] = "list",
	[TUI_EL_LIST_SELECTED] = "list.selected",
	[TUI_EL_LIST_DIM] = "list.dim",
	[TUI_EL_LIST_UNSEEN] = "list.unseen",
	[TUI_EL_LIST_HOST] = "list.host",
	[TUI_EL_BADGE + TUI_ACTIVITY_UNKNOWN] = "badge.unknown",
	[TUI_EL_BADGE + TUI_ACTIVITY_STARTING] = "badge.starting",
	[TUI_EL_BADGE + TUI_ACTIVITY_WORKING] = "badge.working",
	[TUI_EL_BADGE + TUI_ACTIVITY_PROMPT] = "badge.prompt",
	[TUI_EL_BADGE + TUI_ACTIVITY_BLOCKED] = "badge.blocked",
	[TUI_EL_BADGE + TUI_ACTIVITY_DONE] = "badge.done",
	[TUI_EL_BADGE + TUI_ACTIVITY_FAILED] = "badge.failed",
	[TUI_EL_BADGE + TUI_ACTIVITY_CANCELLED] = "badge.cancelled",
	[TUI_EL_BADGE + TUI_ACTIVITY_LOST] = "badge.lost",
	[TUI_EL_PANE] = "pane",
	[TUI_EL_BORDER] = "border",
	[TUI_EL_BORDER_LABEL] = "border.label",
	[TUI_EL_STATUS] = "status",
	[TUI_EL_STATUS_MODE] = "status.mode",
	[TUI_EL_STATUS_TYPING] = "status.typing",
	[TUI_EL_STATUS_MESSAGE] = "status.message",
	[TUI_EL_STATUS_ERROR] = "status.error",
	[TUI_EL_DETAIL] = "detail",
	[TUI_EL_DETAIL_KEY] = "detail.key",
	[TUI_EL_DETAIL_TITLE] = "detail.title",
	[TUI_EL_HELP] = "help",
	[TUI_EL_SCROLL] = "scroll",
	[TUI_EL_REVIEW_TITLE] = "review.title",
	[TUI_EL_REVIEW_WARN] = "review.warn",
	[TUI_EL_REVIEW_GOOD] = "review.good",
	[TUI_EL_REVIEW_BAD] = "review.bad",
	[TUI_EL_DIFF_FILE] = "diff.file",
	[TUI_EL_DIFF_HUNK] = "diff.hunk",
	[TUI_EL_DIFF_ADD] = "diff.add",
	[TUI_EL_DIFF_DEL] = "diff.del",
	[TUI_EL_DIFF_DROPPED] = "diff.dropped",
};

/* The built-in dark theme; themes/default.theme says the same. */
static const struct tui_style defaults[TUI_EL_COUNT] = {
	[TUI_EL_LIST] = { DEF, DEF, 0 },
	[TUI_EL_LIST_SELECTED] = { IDX(BLACK), IDX(CYAN), 0 },
	[TUI_EL_LIST_DIM] = { IDX(BRIGHT + BLACK), DEF, 0 },
	[TUI_EL_LIST_UNSEEN] = { IDX(BRIGHT + YELLOW), DEF, PTY_ATTR_BOLD },
	[TUI_EL_LIST_HOST] = { IDX(BRIGHT + WHITE), IDX(RED), PTY_ATTR_BOLD },
	[TUI_EL_BADGE + TUI_ACTIVITY_UNKNOWN] = { IDX(WHITE),
	    IDX(BRIGHT + BLACK), 0 },
	[TUI_EL_BADGE + TUI_ACTIVITY_STARTING] = { IDX(BRIGHT + WHITE),
	    IDX(BLUE), 0 },
	[TUI_EL_BADGE + TUI_ACTIVITY_WORKING] = { IDX(BLACK), IDX(GREEN), 0 },
	[TUI_EL_BADGE + TUI_ACTIVITY_PROMPT] = { IDX(BLACK),
	    IDX(BRIGHT + BLUE), 0 },
	[TUI_EL_BADGE + TUI_ACTIVITY_BLOCKED] = { IDX(BLACK), IDX(YELLOW),
	    PTY_ATTR_BOLD },
	[TUI_EL_BADGE + TUI_ACTIVITY_DONE] = { IDX(BLACK), IDX(WHITE), 0 },
	[TUI_EL_BADGE + TUI_ACTIVITY_FAILED] = { IDX(BRIGHT + WHITE), IDX(RED),
	    PTY_ATTR_BOLD },
	[TUI_EL_BADGE + TUI_ACTIVITY_CANCELLED] = { IDX(BLACK), IDX(MAGENTA),
	    0 },
	[TUI_EL_BADGE + TUI_ACTIVITY_LOST] = { IDX(BRIGHT + WHITE),
	    IDX(BRIGHT + BLACK), PTY_ATTR_BOLD },
	[TUI_EL_PANE] = { DEF, DEF, 0 },
	[TUI_EL_BORDER] = { IDX(BRIGHT + BLACK), DEF, 0 },
	[TUI_EL_BORDER_LABEL] = { DEF, DEF, PTY_ATTR_BOLD },
	[TUI_EL_STATUS] = { IDX(BLACK), IDX(WHITE), 0 },
	[TUI_EL_STATUS_MODE] = { IDX(BRIGHT + WHITE), IDX(BLUE),
	    PTY_ATTR_BOLD },
	[TUI_EL_STATUS_TYPING] = { IDX(BLACK), IDX(YELLOW), PTY_ATTR_BOLD },
	[TUI_EL_STATUS_MESSAGE] = { IDX(BLACK), IDX(WHITE), PTY_ATTR_BOLD },
	[TUI_EL_STATUS_ERROR] = { IDX(BRIGHT + WHITE), IDX(RED),
	    PTY_ATTR_BOLD },
	[TUI_EL_DETAIL] = { DEF, DEF, 0 },
	[TUI_EL_DETAIL_KEY] = { IDX(CYAN), DEF, 0 },
	[TUI_EL_DETAIL_TITLE] = { DEF, DEF, PTY_ATTR_BOLD | UL },
	[TUI_EL_HELP] = { IDX(BRIGHT + WHITE), IDX(BLUE), 0 },
	[TUI_EL_SCROLL] = { IDX(BLACK), IDX(YELLOW), 0 },
	[TUI_EL_REVIEW_TITLE] = { DEF, DEF, PTY_ATTR_BOLD },
	[TUI_EL_REVIEW_WARN] = { IDX(YELLOW), DEF, 0 },
	[TUI_EL_REVIEW_GOOD] = { IDX(GREEN), DEF, 0 },
	[TUI_EL_REVIEW_BAD] = { IDX(BRIGHT + RED), DEF, PTY_ATTR_BOLD },
	[TUI_EL_DIFF_FILE] = { DEF, DEF, PTY_ATTR_BOLD | UL },
	[TUI_EL_DIFF_HUNK] = { IDX(CYAN), DEF, 0 },
	[TUI_EL_DIFF_ADD] = { IDX(GREEN), DEF, 0 },
	[TUI_EL_DIFF_DEL] = { IDX(RED), DEF, 0 },
	[TUI_EL_DIFF_DROPPED] = { IDX(BRIGHT + BLACK), DEF, PTY_ATTR_STRIKE },
};

/* Without colour, what keeps each element visible (SPEC 4.6). */
static const uint16_t mono_attrs[TUI_EL_COUNT] = {
	[TUI_EL_LIST_SELECTED] = PTY_ATTR_REVERSE,
	[TUI_EL_LIST_UNSEEN] = PTY_ATTR_BOLD,
	[TUI_EL_LIST_HOST] = PTY_ATTR_REVERSE | PTY_ATTR_BOLD,
	[TUI_EL_BADGE + TUI_ACTIVITY_STARTING] = PTY_ATTR_BOLD,
	[TUI_EL_BADGE + TUI_ACTIVITY_WORKING] = PTY_ATTR_BOLD,
	[TUI_EL_BADGE + TUI_ACTIVITY_PROMPT] = PTY_ATTR_BOLD,
	[TUI_EL_BADGE + TUI_ACTIVITY_BLOCKED] = PTY_ATTR_BOLD |
	    PTY_ATTR_REVERSE,
	[TUI_EL_BADGE + TUI_ACTIVITY_DONE] = PTY_ATTR_BOLD,
	[TUI_EL_BADGE + TUI_ACTIVITY_FAILED] = PTY_ATTR_BOLD |
	    PTY_ATTR_REVERSE,
	[TUI_EL_BADGE + TUI_ACTIVITY_CANCELLED] = PTY_ATTR_BOLD,
	[TUI_EL_BADGE + TUI_ACTIVITY_LOST] = PTY_ATTR_BOLD | PTY_ATTR_REVERSE,
	[TUI_EL_STATUS] = PTY_ATTR_REVERSE,
	[TUI_EL_STATUS_MODE] = PTY_ATTR_REVERSE | PTY_ATTR_BOLD,
	[TUI_EL_STATUS_TYPING] = PTY_ATTR_REVERSE | PTY_ATTR_BOLD | UL,
	[TUI_EL_STATUS_MESSAGE] = PTY_ATTR_REVERSE | PTY_ATTR_BOLD,
	[TUI_EL_STATUS_ERROR] = PTY_ATTR_REVERSE | PTY_ATTR_BOLD,
	[TUI_EL_DETAIL_KEY] = PTY_ATTR_BOLD,
	[TUI_EL_DETAIL_TITLE] = PTY_ATTR_BOLD,
	[TUI_EL_HELP] = PTY_ATTR_REVERSE,
	[TUI_EL_SCROLL] = PTY_ATTR_REVERSE,
	[TUI_EL_REVIEW_TITLE] = PTY_ATTR_BOLD,
	[TUI_EL_REVIEW_WARN] = PTY_ATTR_BOLD,
	[TUI_EL_REVIEW_BAD] = PTY_ATTR_BOLD | PTY_ATTR_REVERSE,
	[TUI_EL_DIFF_FILE] = PTY_ATTR_BOLD,
	[TUI_EL_DIFF_HUNK] = PTY_ATTR_BOLD,
	[TUI_EL_DIFF_DROPPED] = PTY_ATTR_STRIKE,
};

static const char *const color_names[8] = { "black", "red", "green",
	"yellow", "blue", "magenta", "cyan", "white" };

static const struct {
	const char *name;
	uint16_t attr;
} attr_names[] = {
	{ "bold", PTY_ATTR_BOLD },
	{ "underline", UL },
	{ "italic", PTY_ATTR_ITALIC },
	{ "blink", PTY_ATTR_BLINK },
	{ "reverse", PTY_ATTR_REVERSE },
	{ "strike", PTY_ATTR_STRIKE },
	{ "strikethrough", PTY_ATTR_STRIKE },
};

/* xterm's default palette for 0..15. */
static const uint8_t palette16[16][3] = {
	{ 0, 0, 0 }, { 205, 0, 0 }, { 0, 205, 0 }, { 205, 205, 0 },
	{ 0, 0, 238 }, { 205, 0, 205 }, { 0, 205, 205 }, { 229, 229, 229 },
	{ 127, 127, 127 }, { 255, 0, 0 }, { 0, 255, 0 }, { 255, 255, 0 },
	{ 92, 92, 255 }, { 255, 0, 255 }, { 0, 255, 255 }, { 255, 255, 255 },
};

static const uint8_t cube_levels[6] = { 0, 95, 135, 175, 215, 255 };

const char *
tui_theme_el_name(enum tui_el el)
{
	if ((unsigned)el >= TUI_EL_COUNT)
		return "?";
	return el_names[el];
}

int
tui_theme_el_from_name(const char *name)
{
	int i;

	if (name == NULL)
		return -1;
	for (i = 0; i < TUI_EL_COUNT; i++)
		if (strcmp(name, el_names[i]) == 0)
			return i;
	return -1;
}

void
tui_theme_default(struct tui_theme *th)
{
	assert(th != NULL);
	memset(th, 0, sizeof *th);
	memcpy(th->el, defaults, sizeof th->el);
	snprintf(th->name, sizeof th->name, "default");
}

void
tui_theme_set_no_color(struct tui_theme *th, bool on)
{
	assert(th != NULL);
	th->no_color = on;
}

void
tui_theme_style(const struct tui_theme *th, enum tui_el el,
    struct tui_style *out)
{
	assert(th != NULL && out != NULL && (unsigned)el < TUI_EL_COUNT);
	*out = th->el[el];
	if (th->no_color) {
		out->fg = out->bg = PTY_COLOR_DEFAULT;
		out->attrs |= mono_attrs[el];
	}
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int
tui_theme_parse_color(const char *w, uint32_t *out)
{
	const char *p;
	unsigned long v;
	char *end;
	int i, h[6];

	assert(out != NULL);
	if (w == NULL || *w == '\0')
		return -EINVAL;
	if (strcasecmp(w, "default") == 0) {
		*out = PTY_COLOR_DEFAULT;
		return 0;
	}
	if (w[0] == '#') {
		if (strlen(w) != 7)
			return -EINVAL;
		for (i = 0; i < 6; i++)
			if ((h[i] = hexval((unsigned char)w[i + 1])) < 0)
				return -EINVAL;
		*out = PTY_COLOR_RGB(h[0] * 16 + h[1], h[2] * 16 + h[3],
		    h[4] * 16 + h[5]);
		return 0;
	}
	if (strncasecmp(w, "colour", 6) == 0 ||
	    strncasecmp(w, "color", 5) == 0) {
		p = w + (tolower((unsigned char)w[4]) == 'u' ? 6 : 5);
		if (!isdigit((unsigned char)*p) || strlen(p) > 3)
			return -EINVAL;
		v = strtoul(p, &end, 10);
		if (*end != '\0' || v > 255)
			return -EINVAL;
		*out = PTY_COLOR_INDEXED(v);
		return 0;
	}
	if (strcasecmp(w, "grey") == 0 || strcasecmp(w, "gray") == 0) {
		*out = PTY_COLOR_INDEXED(BRIGHT + BLACK);
		return 0;
	}
	p = w;
	i = 0;
	if (strncasecmp(p, "bright", 6) == 0) {
		p += 6;
		if (*p == '-' || *p == '_')
			p++;
		i = BRIGHT;
	}
	for (v = 0; v < 8; v++) {
		if (strcasecmp(p, color_names[v]) == 0) {
			*out = PTY_COLOR_INDEXED(i + (int)v);
			return 0;
		}
	}
	return -EINVAL;
}

int
tui_theme_parse_style(const char *value, struct tui_style *out)
{
	char buf[256], *tok, *save = NULL;
	struct tui_style st = { DEF, DEF, 0 };
	bool have_fg = false, have_bg = false, want_bg = false, any = false;
	uint32_t c;
	size_t i;

	assert(out != NULL);
	if (value == NULL || strlen(value) >= sizeof buf)
		return -EINVAL;
	memcpy(buf, value, strlen(value) + 1);
	for (tok = strtok_r(buf, " \t,", &save); tok != NULL;
	    tok = strtok_r(NULL, " \t,", &save)) {
		any = true;
		if (strcasecmp(tok, "on") == 0) {
			if (want_bg || have_bg)
				return -EINVAL;
			want_bg = true;
			continue;
		}
		if (tui_theme_parse_color(tok, &c) == 0) {
			if (want_bg) {
				st.bg = c;
				have_bg = true;
				want_bg = false;
			} else if (!have_fg && !have_bg) {
				st.fg = c;
				have_fg = true;
			} else
				return -EINVAL;	/* a stray colour */
			continue;
		}
		if (want_bg)
			return -EINVAL;		/* "on" without a colour */
		if (strcasecmp(tok, "none") == 0 ||
		    strcasecmp(tok, "plain") == 0)
			continue;
		for (i = 0; i < sizeof attr_names / sizeof attr_names[0]; i++)
			if (strcasecmp(tok, attr_names[i].name) == 0)
				break;
		if (i == sizeof attr_names / sizeof attr_names[0])
			return -EINVAL;
		st.attrs |= attr_names[i].attr;
	}
	if (!any || want_bg)
		return -EINVAL;
	*out = st;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Loading                                                             */

struct load {
	FILE *f;
	struct tui_theme *th;
	int line;		/* line of the text last handed to inih */
	int next;
	int err_line;		/* first error we found, 0 if none */
	char err[160];
};

static void
load_error(struct load *ld, const char *fmt, const char *arg)
{
	char safe[64];

	if (ld->err_line != 0)
		return;
	ld->err_line = ld->line;
	tui_escape(arg, strlen(arg), safe, sizeof safe);
	snprintf(ld->err, sizeof ld->err, fmt, safe);
}

/* fgets for inih that counts lines, so errors can name them. */
static char *
load_read(char *str, int num, void *stream)
{
	struct load *ld = stream;
	size_t n;

	if (fgets(str, num, ld->f) == NULL)
		return NULL;
	ld->line = ld->next;
	n = strlen(str);
	if (n > 0 && str[n - 1] == '\n')
		ld->next++;
	else if (!feof(ld->f))
		load_error(ld, "line too long%s", "");
	return str;
}

static int
load_handler(void *user, const char *section, const char *name,
    const char *value)
{
	struct load *ld = user;
	struct tui_style st;
	int el;

	if (section != NULL && section[0] != '\0') {
		load_error(ld, "sections are not used: [%s]", section);
		return 0;
	}
	if (strcmp(name, "name") == 0) {
		tui_escape(value, strlen(value), ld->th->name,
		    sizeof ld->th->name);
		return 1;
	}
	if ((el = tui_theme_el_from_name(name)) < 0) {
		load_error(ld, "unknown key '%s'", name);
		return 0;
	}
	if (tui_theme_parse_style(value, &st) < 0) {
		load_error(ld, "bad style '%s' (want: FG [on BG] [ATTR...])",
		    value);
		return 0;
	}
	ld->th->el[el] = st;
	return 1;
}

int
tui_theme_load(const char *path, struct tui_theme *th, char *err,
    size_t errsz)
{
	struct load ld = { .th = th, .line = 1, .next = 1 };
	char safe[256];
	int rc, e;

	assert(th != NULL && (err != NULL || errsz == 0));
	if (errsz > 0)
		err[0] = '\0';
	tui_theme_default(th);
	if (path == NULL)
		return -EINVAL;
	tui_escape(path, strlen(path), safe, sizeof safe);
	if ((ld.f = fopen(path, "r")) == NULL) {
		e = errno;
		if (errsz > 0)
			snprintf(err, errsz, "%s: %s", safe, strerror(e));
		return -e;
	}
	rc = ini_parse_stream(load_read, &ld, load_handler, &ld);
	e = ferror(ld.f) ? EIO : 0;
	fclose(ld.f);
	if (e != 0) {
		if (errsz > 0)
			snprintf(err, errsz, "%s: %s", safe, strerror(e));
		rc = -e;
	} else if (rc != 0 || ld.err_line != 0) {
		if (ld.err_line == 0 || (rc > 0 && rc < ld.err_line)) {
			ld.err_line = rc;
			snprintf(ld.err, sizeof ld.err,
			    "syntax error (want: key = value)");
		}
		if (errsz > 0)
			snprintf(err, errsz, "%s:%d: %s", safe, ld.err_line,
			    ld.err);
		rc = -EINVAL;
	}
	if (rc < 0)
		tui_theme_default(th);	/* never half a theme */
	return rc;
}

/* ------------------------------------------------------------------ */
/* Colour depth                                                        */

void
tui_theme_index_rgb(unsigned idx, uint8_t rgb[3])
{
	unsigned i;

	idx &= 0xffu;
	if (idx < 16) {
		memcpy(rgb, palette16[idx], 3);
	} else if (idx < 232) {
		i = idx - 16;
		rgb[0] = cube_levels[i / 36];
		rgb[1] = cube_levels[(i / 6) % 6];
		rgb[2] = cube_levels[i % 6];
	} else {
		rgb[0] = rgb[1] = rgb[2] = (uint8_t)(8 + 10 * (idx - 232));
	}
}

static unsigned
dist2(const uint8_t a[3], const uint8_t b[3])
{
	int dr = a[0] - b[0], dg = a[1] - b[1], db = a[2] - b[2];

	return (unsigned)(dr * dr + dg * dg + db * db);
}

static int
chroma(const uint8_t c[3])
{
	int hi = c[0], lo = c[0], i;

	for (i = 1; i < 3; i++) {
		if (c[i] > hi)
			hi = c[i];
		if (c[i] < lo)
			lo = c[i];
	}
	return hi - lo;
}

/*
 * Nearest of palette entries 0..n-1 (n is 8 or 16). Plain RGB distance
 * would turn grey into yellow, so a difference in colourfulness counts
 * too: greys go to greys.
 */
static unsigned
nearest_basic(const uint8_t rgb[3], unsigned n)
{
	unsigned i, best = 0, d, bestd = ~0u;
	int dc;

	for (i = 0; i < n; i++) {
		dc = chroma(rgb) - chroma(palette16[i]);
		d = dist2(rgb, palette16[i]) + (unsigned)(dc * dc);
		if (d < bestd) {
			bestd = d;
			best = i;
		}
	}
	return best;
}

static unsigned
cube_index(uint8_t v)
{
	if (v < 48)
		return 0;
	if (v < 115)
		return 1;
	return (v - 35u) / 40u;
}

static unsigned
nearest_256(const uint8_t rgb[3])
{
	uint8_t cube[3], grey[3];
	unsigned ci[3], avg, gi, i;

	for (i = 0; i < 3; i++) {
		ci[i] = cube_index(rgb[i]);
		cube[i] = cube_levels[ci[i]];
	}
	avg = ((unsigned)rgb[0] + rgb[1] + rgb[2]) / 3;
	gi = avg < 8 ? 0 : avg > 238 ? 23 : (avg - 8 + 5) / 10;
	if (gi > 23)
		gi = 23;
	grey[0] = grey[1] = grey[2] = (uint8_t)(8 + 10 * gi);
	if (dist2(rgb, grey) < dist2(rgb, cube))
		return 232 + gi;
	return 16 + 36 * ci[0] + 6 * ci[1] + ci[2];
}

uint32_t
tui_theme_degrade(uint32_t c, enum tui_colors depth)
{
	uint8_t rgb[3];
	unsigned kind = PTY_COLOR_KIND(c), idx = c & 0xffu;

	if (kind != PTY_COLOR_KIND_INDEXED && kind != PTY_COLOR_KIND_RGB)
		return PTY_COLOR_DEFAULT;
	switch (depth) {
	case TUI_COLORS_NONE:
		return PTY_COLOR_DEFAULT;
	case TUI_COLORS_TRUE:
		return c;
	case TUI_COLORS_256:
		if (kind == PTY_COLOR_KIND_INDEXED)
			return c;
		rgb[0] = (uint8_t)(c >> 16);
		rgb[1] = (uint8_t)(c >> 8);
		rgb[2] = (uint8_t)c;
		return PTY_COLOR_INDEXED(nearest_256(rgb));
	case TUI_COLORS_16:
	case TUI_COLORS_8:
		if (kind == PTY_COLOR_KIND_INDEXED &&
		    idx < (depth == TUI_COLORS_16 ? 16u : 8u))
			return c;
		if (kind == PTY_COLOR_KIND_INDEXED)
			tui_theme_index_rgb(idx, rgb);
		else {
			rgb[0] = (uint8_t)(c >> 16);
			rgb[1] = (uint8_t)(c >> 8);
			rgb[2] = (uint8_t)c;
		}
		return PTY_COLOR_INDEXED(nearest_basic(rgb,
		    depth == TUI_COLORS_16 ? 16 : 8));
	}
	return PTY_COLOR_DEFAULT;
}

enum tui_colors
tui_theme_colors_detect(int ncolors, const char *colorterm,
    const char *no_color)
{
	if (no_color != NULL && no_color[0] != '\0')
		return TUI_COLORS_NONE;
	if (ncolors < 8)
		return TUI_COLORS_NONE;
	if (colorterm != NULL && (strcasecmp(colorterm, "truecolor") == 0 ||
	    strcasecmp(colorterm, "24bit") == 0))
		return TUI_COLORS_TRUE;
	if (ncolors >= 0x1000000)
		return TUI_COLORS_TRUE;
	if (ncolors >= 256)
		return TUI_COLORS_256;
	if (ncolors >= 16)
		return TUI_COLORS_16;
	return TUI_COLORS_8;
}
