/*
 * keymap.c: the operator's keymap file (issue 9): tmux-like lines that
 * change the console's default bindings (keys.c), read from
 * $XDG_CONFIG_HOME/corral/keys. A malformed line is named with its file
 * and line, and then nothing of the file applies: the defaults stay.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/console/console.h"

#define KEYMAP_FILE_MAX (64u * 1024u)
#define KEYMAP_LINE_MAX 512
#define KEYMAP_WORDS 6

static void
say(char *err, size_t errsz, const char *file, int line, const char *what,
    const char *word)
{
	char safe[80];

	if (err == NULL || errsz == 0)
		return;
	if (word != NULL) {
		tui_escape(word, strlen(word), safe, sizeof safe);
		snprintf(err, errsz, "%s:%d: %s '%s'", file, line, what, safe);
	} else {
		snprintf(err, errsz, "%s:%d: %s", file, line, what);
	}
}

/* Split a line into blank-separated words; -1 when there are too many. */
static int
split(char *s, char **w, int max)
{
	int n = 0;

	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '\0' || *s == '#')
			return n;
		if (n == max)
			return -1;
		w[n++] = s;
		while (*s != '\0' && *s != ' ' && *s != '\t')
			s++;
		if (*s != '\0')
			*s++ = '\0';
	}
}

/* One line into k; 0 or -EINVAL with err set. */
static int
parse_line(struct tui_keys *k, const char *file, int ln, char *line,
    char *err, size_t errsz)
{
	char *w[KEYMAP_WORDS];
	struct tui_key key;
	int n, i = 1, t = TUI_TABLE_NORMAL, cmd = -1;
	bool bind;

	if ((n = split(line, w, KEYMAP_WORDS)) < 0) {
		say(err, errsz, file, ln, "too many words", NULL);
		return -EINVAL;
	}
	if (n == 0)
		return 0;
	if (strcmp(w[0], "prefix") == 0) {
		if (n != 2 || tui_keys_parse(w[1], &key) < 0 ||
		    tui_keys_set_prefix(k, &key) < 0) {
			say(err, errsz, file, ln, "want: prefix KEY, not",
			    n >= 2 ? w[1] : "");
			return -EINVAL;
		}
		return 0;
	}
	bind = strcmp(w[0], "bind") == 0;
	if (!bind && strcmp(w[0], "unbind") != 0) {
		say(err, errsz, file, ln, "unknown directive (want bind, "
		    "unbind or prefix):", w[0]);
		return -EINVAL;
	}
	if (i < n && strcmp(w[i], "-T") == 0) {
		if (i + 1 >= n || (t = tui_keys_table_from_name(w[i + 1])) <
		    0) {
			say(err, errsz, file, ln, "unknown table (want normal, "
			    "prefix, scroll, review or timeline):",
			    i + 1 < n ? w[i + 1] : "");
			return -EINVAL;
		}
		i += 2;
	}
	if (i >= n || (bind ? n - i != 2 : n - i != 1)) {
		say(err, errsz, file, ln, bind ? "want: bind [-T TABLE] KEY "
		    "COMMAND" : "want: unbind [-T TABLE] KEY", NULL);
		return -EINVAL;
	}
	if (tui_keys_parse(w[i], &key) < 0) {
		say(err, errsz, file, ln, "unknown key", w[i]);
		return -EINVAL;
	}
	if (bind && (cmd = tui_keys_command_find(w[i + 1])) < 0) {
		say(err, errsz, file, ln, "unknown command", w[i + 1]);
		return -EINVAL;
	}
	switch (tui_keys_bind(k, (enum tui_table)t, &key, cmd)) {
	case 0:
		return 0;
	case -ENOSPC:
		say(err, errsz, file, ln, "too many bindings", NULL);
		return -EINVAL;
	default:
		say(err, errsz, file, ln, "cannot bind the prefix key", w[i]);
		return -EINVAL;
	}
}

int
tui_keymap_parse(struct tui_keys *k, const char *file, const char *text,
    size_t len, char *err, size_t errsz)
{
	struct tui_keys *tmp;
	char line[KEYMAP_LINE_MAX + 1];
	const char *p = text, *end = text + len, *nl;
	size_t ll;
	int ln = 0, rc = 0;

	assert(k != NULL && file != NULL);
	if (text == NULL && len > 0)
		return -EINVAL;
	if (err != NULL && errsz > 0)
		err[0] = '\0';
	/* Work on a copy: a bad line leaves *k as it was. */
	if ((tmp = malloc(sizeof *tmp)) == NULL)
		return -ENOMEM;
	*tmp = *k;
	while (p < end && rc == 0) {
		ln++;
		nl = memchr(p, '\n', (size_t)(end - p));
		ll = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		if (ll > 0 && p[ll - 1] == '\r')
			ll--;
		if (ll > KEYMAP_LINE_MAX) {
			say(err, errsz, file, ln, "line too long", NULL);
			rc = -EINVAL;
		} else if (memchr(p, '\0', ll) != NULL) {
			say(err, errsz, file, ln, "NUL byte in line", NULL);
			rc = -EINVAL;
		} else {
			memcpy(line, p, ll);
			line[ll] = '\0';
			rc = parse_line(tmp, file, ln, line, err, errsz);
		}
		p = nl != NULL ? nl + 1 : end;
	}
	if (rc == 0)
		*k = *tmp;
	free(tmp);
	return rc;
}

int
tui_keymap_path(char *buf, size_t bufsz)
{
	return tui_config_file("keys", buf, bufsz);
}

int
tui_keymap_load(struct tui_keys *k, const char *path, char *err,
    size_t errsz)
{
	char def[4096], *text;
	FILE *f;
	size_t n;
	int e, rc;

	assert(k != NULL);
	if (err != NULL && errsz > 0)
		err[0] = '\0';
	if (path == NULL) {
		if (tui_keymap_path(def, sizeof def) < 0)
			return 0;
		path = def;
	}
	if ((f = fopen(path, "r")) == NULL) {
		e = errno;
		if (e == ENOENT || e == ENOTDIR)
			return 0;	/* no keymap: the defaults */
		if (err != NULL)
			snprintf(err, errsz, "%s: %s", path, strerror(e));
		return -e;
	}
	if ((text = malloc(KEYMAP_FILE_MAX + 1)) == NULL) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(text, 1, KEYMAP_FILE_MAX + 1, f);
	e = ferror(f) ? EIO : n > KEYMAP_FILE_MAX ? EFBIG : 0;
	fclose(f);
	if (e != 0) {
		if (err != NULL)
			snprintf(err, errsz, "%s: %s", path, e == EFBIG ?
			    "file too large" : strerror(e));
		free(text);
		return -e;
	}
	rc = tui_keymap_parse(k, path, text, n, err, errsz);
	free(text);
	return rc;
}
