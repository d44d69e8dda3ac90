/*
 * dialog.c: choice dialogs read off a screen for any agent, known or not
 * (SPEC 5.3, 5.4): a numbered or lettered option list with a selection
 * marker, a confirm/cancel footer or a question over it, or a y/n question
 * on the last row. Pure: the bottom rows as text in, the question as data
 * out (its text, the options with the keys that select each, the default
 * and a digest), every field bounded and cut on a UTF-8 boundary.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pty/pty.h"

#define ROWS PTY_DIALOG_ROWS
#define QUESTION_ROWS 12	/* rows above the options a question may start */
#define CONT_MAX 4		/* continuation rows of one option */
#define AFTER_MAX 6		/* footer, border and blank rows after them */

struct row {
	const char *s;		/* the row without its border */
	size_t len;
	int indent;		/* blanks before s */
};

/* Selection markers drawn before the option under the cursor. */
static const char *const markers[] = { "\xe2\x9d\xaf" /* U+276F */,
	"\xe2\x80\xba" /* U+203A */, "\xe2\x96\xb6" /* U+25B6 */,
	"\xe2\x96\xba" /* U+25BA */, "\xe2\x96\xb8" /* U+25B8 */,
	"\xe2\x86\x92" /* U+2192 */, "\xe2\x9e\x9c" /* U+279C */,
	"\xe2\x97\x8f" /* U+25CF */, ">", NULL };

/* Rows of history above a dialog: an agent's bullets and spinners. */
static const char *const bullets[] = { "\xe2\x80\xa2" /* U+2022 */,
	"\xe2\x8f\xba" /* U+23FA */, "\xe2\x97\x8f" /* U+25CF */,
	"\xe2\x9c\xbb" /* U+273B */, "\xe2\x9c\xb6" /* U+2736 */,
	"\xe2\x97\xa6" /* U+25E6 */, "\xe2\x9d\xaf" /* U+276F */,
	"\xe2\x80\xba" /* U+203A */, NULL };

static size_t
prefix(const char *s, size_t len, const char *const *set)
{
	for (int i = 0; set[i] != NULL; i++) {
		size_t l = strlen(set[i]);

		if (len >= l && memcmp(s, set[i], l) == 0)
			return l;
	}
	return 0;
}

/* A vertical border: U+2502, U+2503, U+2551, '|'. */
static size_t
vbar(const unsigned char *s, size_t len)
{
	if (len >= 1 && s[0] == '|')
		return 1;
	if (len >= 3 && s[0] == 0xe2 && ((s[1] == 0x94 && (s[2] == 0x82 ||
	    s[2] == 0x83)) || (s[1] == 0x95 && s[2] == 0x91)))
		return 3;
	return 0;
}

/* Box drawing and block elements (U+2500..U+259F), or '-', '=', '+'. */
static bool
border_row(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	bool any = false;

	while (i < len) {
		if (u[i] == ' ') {
			i++;
		} else if (u[i] == '-' || u[i] == '=' || u[i] == '+') {
			i++;
			any = true;
		} else if (i + 2 < len && u[i] == 0xe2 && (u[i + 1] == 0x94 ||
		    u[i + 1] == 0x95 || (u[i + 1] == 0x96 && u[i + 2] <= 0x9f))) {
			i += 3;
			any = true;
		} else {
			return false;
		}
	}
	return any;
}

static void
row_strip(struct row *r, const char *s, size_t len)
{
	const unsigned char *u;
	size_t k;

	r->indent = 0;
	while (len > 0 && *s == ' ') {
		s++;
		len--;
		r->indent++;
	}
	u = (const unsigned char *)s;
	if (!border_row(s, len) && (k = vbar(u, len)) > 0) {
		s += k;
		len -= k;
		r->indent = 0;
		while (len > 0 && *s == ' ') {
			s++;
			len--;
			r->indent++;
		}
	}
	while (len > 0 && s[len - 1] == ' ')
		len--;
	u = (const unsigned char *)s;
	if (!border_row(s, len)) {
		if (len >= 3 && vbar(u + len - 3, 3) == 3)
			len -= 3;
		else if (len >= 1 && s[len - 1] == '|')
			len--;
	}
	while (len > 0 && s[len - 1] == ' ')
		len--;
	r->s = s;
	r->len = len;
}

static bool
has_word(const char *s, size_t len, const char *w)
{
	size_t wl = strlen(w);

	for (size_t i = 0; i + wl <= len; i++)
		if (strncasecmp(s + i, w, wl) == 0)
			return true;
	return false;
}

/* "Enter to confirm · Esc to cancel", "Press enter to continue"... */
static bool
footer_row(const struct row *r)
{
	static const char *const verbs[] = { "confirm", "cancel", "select",
		"choose", "continue", "go back", "exit", "navigate", "amend",
		NULL };

	if (r->len > 200 || !(has_word(r->s, r->len, "enter") ||
	    has_word(r->s, r->len, "esc") || has_word(r->s, r->len, "return")))
		return false;
	for (int i = 0; verbs[i] != NULL; i++)
		if (has_word(r->s, r->len, verbs[i]))
			return true;
	return false;
}

/* Copy len bytes into dst (sz), cut on a UTF-8 boundary. */
static void
put_text(char *dst, size_t sz, size_t *o, const char *s, size_t len)
{
	size_t room = *o < sz ? sz - 1 - *o : 0, n = len < room ? len : room;

	if (n < len)
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	memcpy(dst + *o, s, n);
	*o += n;
	dst[*o] = '\0';
}

struct opt {
	bool marked;
	char name[4];
	int key;		/* 1.. for digits, 'a'.. for letters */
	const char *label;	/* in the row */
	size_t label_len;
};

/* "[marker] N. label", "N) label", "a. label": the option on the row. */
static bool
option_row(const struct row *r, struct opt *o)
{
	const char *s = r->s;
	size_t len = r->len, k;
	int n = 0, digits = 0;

	memset(o, 0, sizeof *o);
	if ((k = prefix(s, len, markers)) > 0) {
		o->marked = true;
		s += k;
		len -= k;
		while (len > 0 && *s == ' ') {
			s++;
			len--;
		}
	}
	while ((size_t)digits < len && digits < 3 && s[digits] >= '0' &&
	    s[digits] <= '9') {
		n = n * 10 + (s[digits] - '0');
		digits++;
	}
	if (digits == 0 && len > 0 && ((*s >= 'a' && *s <= 'z') ||
	    (*s >= 'A' && *s <= 'Z'))) {
		n = *s | 0x20;
		digits = 1;
	} else if (digits == 0 || digits == 3 || n == 0) {
		return false;
	}
	if ((size_t)digits + 2 >= len || (s[digits] != '.' &&
	    s[digits] != ')') || s[digits + 1] != ' ')
		return false;
	snprintf(o->name, sizeof o->name, "%.*s", digits, s);
	if (n >= 'a' && n <= 'z')
		o->name[0] = (char)n;
	o->key = n;
	o->label = s + digits + 2;
	o->label_len = len - (size_t)digits - 2;
	while (o->label_len > 0 && *o->label == ' ') {
		o->label++;
		o->label_len--;
	}
	return o->label_len > 0;
}

/* An option's own shortcut, when its label ends in one: "(y)", "(esc)". */
static void
option_keys(struct pty_dialog_option *op, const char *end, size_t len)
{
	if (len >= 3 && end[len - 1] == ')' && end[len - 3] == '(' &&
	    ((end[len - 2] >= 'a' && end[len - 2] <= 'z') ||
	    (end[len - 2] >= '0' && end[len - 2] <= '9'))) {
		op->keys[0] = end[len - 2];
		op->nkeys = 1;
	} else if (len >= 5 && strncasecmp(end + len - 5, "(esc)", 5) == 0) {
		op->keys[0] = '\033';
		op->nkeys = 1;
	} else {
		op->nkeys = 0;
	}
}

static uint64_t
mix(uint64_t h, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	h ^= 0xff;
	return h * 0x100000001b3ull;
}

static void
digest(struct pty_dialog *d)
{
	uint64_t h = 0xcbf29ce484222325ull;

	char def[16];

	/* the selection too: answering by arrows counts from it */
	snprintf(def, sizeof def, "%d", d->def);
	h = mix(h, d->kind == PTY_DIALOG_YESNO ? "yn" : "opt", 3);
	h = mix(h, def, strlen(def));
	h = mix(h, d->question, strlen(d->question));
	for (int i = 0; i < d->noptions; i++) {
		h = mix(h, d->options[i].name, strlen(d->options[i].name));
		h = mix(h, d->options[i].label, strlen(d->options[i].label));
	}
	d->digest = h;
}

/*
 * The question over the options at row first: its text, bounded; true
 * when a row of it ends in '?'.
 */
static bool
question(struct pty_dialog *d, const struct row *rows, int first)
{
	int top = -1, within = -1, i;
	size_t o = 0;
	bool asked;

	/* the topmost row ending in '?' (else holding one) above them */
	for (i = first - 1; i >= 0 && i >= first - QUESTION_ROWS; i--) {
		const struct row *r = &rows[i];

		if (border_row(r->s, r->len) || prefix(r->s, r->len,
		    bullets) > 0)
			break;
		if (r->len > 0 && r->s[r->len - 1] == '?')
			top = i;
		else if (memchr(r->s, '?', r->len) != NULL)
			within = i;
	}
	asked = top >= 0;
	if (top < 0)
		top = within;
	if (top < 0)	/* no question mark: the row just above, if any */
		for (i = first - 1; i >= 0 && i >= first - 2; i--)
			if (rows[i].len > 0 && !border_row(rows[i].s,
			    rows[i].len)) {
				top = i;
				break;
			}
	if (top < 0)
		return false;
	for (i = top; i < first; i++) {
		if (rows[i].len == 0 || border_row(rows[i].s, rows[i].len))
			continue;
		if (o > 0)
			put_text(d->question, sizeof d->question, &o, "\n", 1);
		put_text(d->question, sizeof d->question, &o, rows[i].s,
		    rows[i].len);
	}
	return asked;
}

/*
 * The option list starting at row i (its key 1 or a): the rows it takes,
 * or 0 when what follows it is not only blank, border and footer rows.
 */
static int
options_at(const struct row *rows, int n, int i, struct pty_dialog *d,
    bool *footer, int *marks)
{
	struct opt o, next;
	int j = i + 1, cont = 0, after = 0, last = i;
	struct pty_dialog_option *cur;
	const char *end;
	size_t endlen;

	if (!option_row(&rows[i], &o) || (o.key != 1 && o.key != 'a'))
		return 0;
	memset(d, 0, sizeof *d);
	d->def = -1;
	*marks = 0;
	*footer = false;
	for (;;) {
		cur = d->noptions < PTY_DIALOG_OPTIONS_MAX ?
		    &d->options[d->noptions] : NULL;
		if (cur != NULL) {
			size_t lo = 0;

			snprintf(cur->name, sizeof cur->name, "%s", o.name);
			put_text(cur->label, sizeof cur->label, &lo, o.label,
			    o.label_len);
			d->noptions++;
		}
		if (o.marked) {
			(*marks)++;
			d->def = d->nseen;
		}
		d->nseen++;
		end = o.label;
		endlen = o.label_len;
		cont = 0;
		/* its continuation rows, deeper than its number */
		while (j < n && cont < CONT_MAX && rows[j].len > 0 &&
		    rows[j].indent > rows[last].indent && !option_row(&rows[j],
		    &next) && !footer_row(&rows[j]) &&
		    !border_row(rows[j].s, rows[j].len)) {
			if (cur != NULL) {
				size_t lo = strlen(cur->label);

				put_text(cur->label, sizeof cur->label, &lo, " ",
				    1);
				put_text(cur->label, sizeof cur->label, &lo,
				    rows[j].s, rows[j].len);
			}
			end = rows[j].s;
			endlen = rows[j].len;
			j++;
			cont++;
		}
		if (cur != NULL)
			option_keys(cur, end, endlen);
		/* the next option, perhaps after one blank row */
		if (j < n && option_row(&rows[j], &next) && next.key == o.key + 1)
			;
		else if (j + 1 < n && rows[j].len == 0 &&
		    option_row(&rows[j + 1], &next) && next.key == o.key + 1)
			j++;
		else
			break;
		last = j;
		o = next;
		j++;
	}
	for (; j < n; j++, after++) {
		if (after == AFTER_MAX)
			return 0;
		if (rows[j].len == 0 || border_row(rows[j].s, rows[j].len))
			continue;
		if (!footer_row(&rows[j]))
			return 0;
		*footer = true;
	}
	return d->nseen;
}

/* "Continue? [Y/n]" on the last row: the answers y and n (then Enter). */
static bool
yesno(const struct row *r, struct pty_dialog *d)
{
	static const char *const ends[] = { "[Y/n]", "[y/N]", "[y/n]",
		"(y/n)", "(Y/n)", "(y/N)", "(Y/N)", "[Y/N]", "(yes/no)",
		"[yes/no]", NULL };
	size_t len = r->len, o = 0;
	int i;

	while (len > 0 && (r->s[len - 1] == ':' || r->s[len - 1] == '?' ||
	    r->s[len - 1] == ' ' || r->s[len - 1] == '>'))
		len--;
	for (i = 0; ends[i] != NULL; i++) {
		size_t l = strlen(ends[i]);

		if (len >= l && memcmp(r->s + len - l, ends[i], l) == 0)
			break;
	}
	if (ends[i] == NULL)
		return false;
	memset(d, 0, sizeof *d);
	d->kind = PTY_DIALOG_YESNO;
	put_text(d->question, sizeof d->question, &o, r->s, r->len);
	d->noptions = d->nseen = 2;
	snprintf(d->options[0].name, sizeof d->options[0].name, "y");
	snprintf(d->options[0].label, sizeof d->options[0].label, "yes");
	memcpy(d->options[0].keys, "y\r", 2);
	d->options[0].nkeys = 2;
	snprintf(d->options[1].name, sizeof d->options[1].name, "n");
	snprintf(d->options[1].label, sizeof d->options[1].label, "no");
	memcpy(d->options[1].keys, "n\r", 2);
	d->options[1].nkeys = 2;
	d->def = ends[i][1] == 'Y' ? 0 : ends[i][3] == 'N' ||
	    ends[i][2] == 'N' ? 1 : -1;
	snprintf(d->evidence, sizeof d->evidence, "%.*s", (int)(r->len <
	    sizeof d->evidence - 1 ? r->len : sizeof d->evidence - 1), r->s);
	return true;
}

bool
pty_dialog_parse(const char *text, struct pty_dialog *out)
{
	struct row rows[ROWS];
	const char *p, *e, *start[ROWS];
	size_t lens[ROWS];
	int n = 0, i, last = -1;

	assert(text != NULL && out != NULL);
	memset(out, 0, sizeof *out);
	out->def = -1;
	/* the last ROWS rows, bottom up */
	p = text + strlen(text);
	while (n < ROWS) {
		e = p;
		while (p > text && p[-1] != '\n')
			p--;
		start[ROWS - 1 - n] = p;
		lens[ROWS - 1 - n] = (size_t)(e - p);
		n++;
		if (p == text)
			break;
		p--;
	}
	for (i = 0; i < n; i++) {
		row_strip(&rows[i], start[ROWS - n + i], lens[ROWS - n + i]);
		if (has_word(rows[i].s, rows[i].len, "to interrupt"))
			return false;	/* a status line: it works */
		if (rows[i].len > 0)
			last = i;
	}
	if (last < 0)
		return false;
	if (yesno(&rows[last], out)) {
		digest(out);
		return true;
	}
	/* the option list nearest the bottom */
	for (i = last; i >= 0; i--) {
		struct pty_dialog d;
		bool footer;
		int marks;

		if (options_at(rows, n, i, &d, &footer, &marks) < 2)
			continue;
		if (!question(&d, rows, i) && marks != 1 && !footer)
			continue;
		d.kind = PTY_DIALOG_OPTIONS;
		snprintf(d.evidence, sizeof d.evidence, "%d options%s%s",
		    d.nseen, marks == 1 ? ", one marked" : "", footer ?
		    ", a confirm/cancel footer" : "");
		*out = d;
		digest(out);
		return true;
	}
	return false;
}

int
pty_dialog_option_find(const struct pty_dialog *d, const char *what)
{
	int i;

	assert(d != NULL && what != NULL);
	if (*what == '\0')
		return -1;
	/* its name on screen ("1", "a", "y"), then its own shortcut key */
	for (i = 0; i < d->noptions; i++)
		if (strcasecmp(d->options[i].name, what) == 0)
			return i;
	for (i = 0; i < d->noptions; i++)
		if (d->options[i].nkeys == 1 && strlen(what) == 1 &&
		    d->options[i].keys[0] == what[0])
			return i;
	if (strspn(what, "0123456789") == strlen(what) && strlen(what) < 4 &&
	    atoi(what) >= 1 && atoi(what) <= d->noptions)
		return atoi(what) - 1;
	/* its label, whole, then a unique start of it */
	for (i = 0; i < d->noptions; i++)
		if (strcasecmp(d->options[i].label, what) == 0)
			return i;
	{
		int hit = -1;

		for (i = 0; i < d->noptions; i++)
			if (strncasecmp(d->options[i].label, what,
			    strlen(what)) == 0) {
				if (hit >= 0)
					return -2;	/* ambiguous */
				hit = i;
			}
		return hit;
	}
}

size_t
pty_dialog_keys(const struct pty_dialog *d, int i, char *buf, size_t bufsz)
{
	const struct pty_dialog_option *op;
	size_t n = 0;
	int k;

	assert(d != NULL && buf != NULL && bufsz >= PTY_DIALOG_ANSWER_KEYS);
	if (i < 0 || i >= d->noptions)
		return 0;
	op = &d->options[i];
	if (op->nkeys > 0) {
		memcpy(buf, op->keys, op->nkeys);
		return op->nkeys;
	}
	if (d->def < 0 || d->def >= d->noptions) {
		n = strlen(op->name);
		memcpy(buf, op->name, n);
		return n;
	}
	/* from the marked option to this one, then Enter */
	for (k = d->def; k != i; k += i > d->def ? 1 : -1) {
		memcpy(buf + n, i > d->def ? "\033[B" : "\033[A", 3);
		n += 3;
	}
	buf[n++] = '\r';
	return n;
}

void
pty_dialog_digest_hex(const struct pty_dialog *d, char buf[17])
{
	assert(d != NULL);
	snprintf(buf, 17, "%016llx", (unsigned long long)d->digest);
}
