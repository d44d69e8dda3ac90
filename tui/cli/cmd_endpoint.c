/*
 * cmd_endpoint.c: commands that talk to a lease's endpoint through its
 * holder: `corral screen` (the current screen as text, or the final screen
 * the holder left on disk), `corral send` (type text), `corral cancel`
 * (SPEC 5.5), `corral answer` (pick an option of the question on its
 * screen, SPEC 5.4). Every wait has a deadline; refusals from the holder (a
 * trusted_local lease without --allow-control) are reported as errors.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "lease/lease.h"
#include "pty/pty.h"
#include "tui/cli/cli.h"

#define EP_TIMEOUT_MS 3000
#define EP_RECORDED_MS 15000	/* cancel: the journal has the end */

/*
 * Print one row of cells as text, escaped, trailing blanks trimmed; or,
 * with arr, append the raw text to arr (jansson escapes it).
 */
static void
row_out(const struct pty_cell *cells, int n, json_t *arr)
{
	char *line = malloc((size_t)n * (4 * PTY_CELL_MAXCP) + 1);
	size_t len = 0, keep = 0;

	if (line == NULL)
		return;
	for (int i = 0; i < n; i++) {
		if (cells[i].width == 0)
			continue;
		if (cells[i].cp[0] == 0) {
			line[len++] = ' ';
			continue;
		}
		len += pty_cell_utf8(&cells[i], line + len, 4 * PTY_CELL_MAXCP +
		    1);
		keep = len;
	}
	if (arr != NULL) {
		json_t *t = json_stringn(line, keep);
		json_array_append_new(arr, t ? t : json_string("?"));
	} else {
		tui_ctx_put_escaped(stdout, line, keep);
		fputc('\n', stdout);
	}
	free(line);
}

static void
print_cells(const struct pty_cell *cells, int n)
{
	row_out(cells, n, NULL);
}

static void
print_mirror(const struct pty_mirror *m)
{
	for (int r = 0; r < m->rows; r++)
		print_cells(pty_mirror_cell(m, r, 0), m->cols);
}

/*
 * The screen as JSON: size, cursor, modes, title, and per row its text and
 * its runs of attributes ({"col","len","fg","bg","attrs"}), so two dumps
 * compare cells, attributes, cursor and modes exactly.
 */
static json_t *
mirror_json(const struct pty_mirror *m)
{
	json_t *o = json_object(), *rows = json_array();
	const struct pty_wire_meta *mt = &m->meta;
	char *line = malloc((size_t)m->cols * (4 * PTY_CELL_MAXCP) + 1);

	for (int r = 0; r < m->rows && line != NULL; r++) {
		json_t *runs = json_array(), *row;
		size_t len = 0;
		int start = 0;

		for (int col = 0; col < m->cols; col++) {
			const struct pty_cell *c = pty_mirror_cell(m, r, col);
			const struct pty_cell *s0 = pty_mirror_cell(m, r, start);

			if (c->width != 0) {
				if (c->cp[0] == 0)
					line[len++] = ' ';
				else
					len += pty_cell_utf8(c, line + len,
					    4 * PTY_CELL_MAXCP + 1);
			}
			if (col + 1 == m->cols || c[1].fg != s0->fg ||
			    c[1].bg != s0->bg || c[1].attrs != s0->attrs) {
				if (s0->fg || s0->bg || s0->attrs)
					json_array_append_new(runs, json_pack(
					    "{s:i,s:i,s:I,s:I,s:i}", "col", start,
					    "len", col + 1 - start, "fg",
					    (json_int_t)s0->fg, "bg",
					    (json_int_t)s0->bg, "attrs",
					    s0->attrs));
				start = col + 1;
			}
		}
		while (len > 0 && line[len - 1] == ' ')
			len--;
		row = json_pack("{s:s%,s:o}", "text", line, len, "runs", runs);
		json_array_append_new(rows, row ? row : json_null());
	}
	free(line);
	json_object_set_new(o, "rows", json_integer(m->rows));
	json_object_set_new(o, "cols", json_integer(m->cols));
	json_object_set_new(o, "cursor", json_pack("{s:i,s:i,s:b,s:b,s:i}",
	    "row", mt->cur_row, "col", mt->cur_col, "visible", mt->cur_visible,
	    "blink", mt->cur_blink, "shape", mt->cur_shape));
	json_object_set_new(o, "modes", json_pack(
	    "{s:b,s:b,s:b,s:b,s:b,s:b,s:b,s:i}",
	    "altscreen", mt->modes & PTY_WMODE_ALT,
	    "app_cursor", mt->modes & PTY_WMODE_APPCURSOR,
	    "app_keypad", mt->modes & PTY_WMODE_APPKEYPAD,
	    "bracketed_paste", mt->modes & PTY_WMODE_PASTE,
	    "mouse_sgr", mt->modes & PTY_WMODE_MOUSESGR,
	    "reverse", mt->modes & PTY_WMODE_REVERSE,
	    "focus_events", mt->modes & PTY_WMODE_FOCUS,
	    "mouse", mt->mouse));
	{
		json_t *t = json_string(m->title);
		json_object_set_new(o, "title", t ? t : json_null());
	}
	json_object_set_new(o, "exited", json_boolean(m->exited));
	json_object_set_new(o, "lines", rows);
	return o;
}

static void
emit_mirror(struct tui_ctx *c, const struct pty_mirror *m, json_t *sb)
{
	json_t *o;

	if (!c->json) {
		print_mirror(m);
		return;
	}
	o = mirror_json(m);
	json_object_set(o, "scrollback", sb ? sb : json_null());
	tui_ctx_print_json(o);
}

static int
print_sb_frame(const uint8_t *p, size_t len, uint32_t *next, uint32_t *total,
    json_t *arr)
{
	struct pty_cell cells[1000];
	struct pty_rd r;
	uint32_t from, n;

	if (pty_wire_check(PTY_W_SB_LINES, p, len) < 0)
		return PTY_EPROTO;
	pty_rd_init(&r, p, len);
	from = pty_rd_u32(&r);
	*total = pty_rd_u32(&r);
	n = pty_rd_u32(&r);
	for (uint32_t i = 0; i < n; i++) {
		size_t used = 0;
		int nc = pty_line_unpack(r.p + r.off, r.len - r.off, cells,
		    1000, &used);

		if (nc < 0)
			return PTY_EPROTO;
		r.off += used;
		row_out(cells, nc, arr);
	}
	*next = from + n;
	return 0;
}

/* The final screen a holder left behind: the same frames, in a file. */
static int
screen_from_file(struct tui_ctx *c, const char *id, bool sb)
{
	char *dir = tui_ctx_lease_dir(c, id), *path = NULL, *buf = NULL;
	struct pty_wire_dec dec;
	struct pty_mirror m;
	const uint8_t *p;
	size_t plen;
	uint8_t type;
	FILE *f;
	long sz;
	int rc = TUI_EXIT_FAIL;
	json_t *sbj = c->json && sb ? json_array() : NULL;

	if (dir == NULL || asprintf(&path, "%s/final.screen", dir) < 0)
		path = NULL;
	free(dir);
	if (path == NULL || (f = fopen(path, "rb")) == NULL) {
		free(path);
		return tui_ctx_err(c,
		    "lease %s has no live holder and no final "
		    "screen", id);
	}
	free(path);
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	rewind(f);
	if (sz <= 0 || sz > (64L << 20) || (buf = malloc((size_t)sz)) == NULL ||
	    fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
		fclose(f);
		free(buf);
		return tui_ctx_err(c, "cannot read the final screen of %s", id);
	}
	fclose(f);
	pty_wire_dec_init(&dec, PTY_WIRE_MAX);
	pty_mirror_init(&m);
	if (pty_wire_dec_push(&dec, buf, (size_t)sz) < 0)
		goto out;
	while ((rc = pty_wire_dec_next(&dec, &type, &p, &plen)) == 1) {
		uint32_t next, total;

		if (type == PTY_W_SB_LINES) {
			if (sb && print_sb_frame(p, plen, &next, &total,
			    sbj) < 0)
				break;
		} else if (pty_mirror_apply(&m, type, p, plen) < 0) {
			break;
		}
	}
	if (rc == 0) {
		emit_mirror(c, &m, sbj);
		rc = TUI_EXIT_OK;
	} else {
		rc = tui_ctx_err(c, "the final screen of %s is corrupt", id);
	}
out:
	json_decref(sbj);
	pty_mirror_free(&m);
	pty_wire_dec_free(&dec);
	free(buf);
	return rc;
}

static int
open_holder(struct tui_ctx *c, const struct lease_record *rec,
    unsigned flags, struct pty_holder_client **out)
{
	char *sock = tui_ctx_holder_sock(c, rec->id);
	int rc;

	if (sock == NULL)
		return -ENOMEM;
	rc = pty_holder_client_open(out, sock, flags, EP_TIMEOUT_MS);
	free(sock);
	return rc;
}

int
tui_cmd_screen_live(struct tui_ctx *c, struct pty_holder_client *cl, bool sb)
{
	struct pty_mirror m;
	bool have_rows = false;
	const uint8_t *p;
	size_t plen;
	uint8_t type, req[8];
	uint32_t next = 0, total = 0;
	json_t *sbj = NULL;
	int rc;

	pty_mirror_init(&m);
	if (sb && c->json)
		sbj = json_array();
	if (sb) {
		do {
			uint32_t cnt = PTY_SB_CHUNK;

			memcpy(req, &next, 4);
			memcpy(req + 4, &cnt, 4);
			if (pty_holder_client_send(cl, PTY_W_SCROLLBACK, req,
			    8) < 0)
				break;
			while ((rc = pty_holder_client_recv(cl, &type, &p,
			    &plen,
			    EP_TIMEOUT_MS)) == 1 && type != PTY_W_SB_LINES) {
				if (pty_mirror_apply(&m, type, p, plen) < 0)
					break;
			}
			if (rc != 1 || print_sb_frame(p, plen, &next,
			    &total, sbj) < 0)
				break;
		} while (next < total);
	}
	/*
	 * The first META + full ROWS answer the LIVE hello; with the
	 * scrollback, the first ROWS after its last SB_LINES is the whole
	 * screen of the same moment (frames before it were applied already).
	 */
	while (!have_rows && (rc = pty_holder_client_recv(cl, &type, &p, &plen,
	    EP_TIMEOUT_MS)) == 1) {
		if (pty_mirror_apply(&m, type, p, plen) < 0)
			break;
		if (type == PTY_W_ROWS && m.rows > 0)
			have_rows = true;
	}
	pty_holder_client_free(cl);
	if (have_rows)
		emit_mirror(c, &m, sbj);
	json_decref(sbj);
	pty_mirror_free(&m);
	return have_rows ? TUI_EXIT_OK : -1;
}

static int
screen_exec(struct tui_ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "scrollback", no_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct lease_record rec;
	struct pty_holder_client *cl = NULL;
	bool sb = false;
	int ch, rc;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "sj", opts, NULL)) != -1) {
		if (ch == 's')
			sb = true;
		else if (ch == 'j')
			c->json = true;
		else
			return tui_ctx_usage(c, "unknown option '%.64s'",
			    argv[optind - 1]);
	}
	if (optind != argc - 1)
		return tui_ctx_usage(c, "expected one lease ID or name");
	if ((rc = tui_ctx_find_lease(c, argv[optind], &rec)) != 0)
		return rc;
	if ((rc = open_holder(c, &rec, PTY_HELLO_LIVE, &cl)) < 0) {
		rc = screen_from_file(c, rec.id, sb);
		if (rc == TUI_EXIT_OK)
			tui_cmd_ls_mark_seen(c, rec.id, rec.unseen);
		lease_record_clear(&rec);
		return rc;
	}
	/* Without its whole screen the holder kept it in a file. */
	if ((rc = tui_cmd_screen_live(c, cl, sb)) != TUI_EXIT_OK)
		rc = screen_from_file(c, rec.id, false);
	if (rc == TUI_EXIT_OK)
		tui_cmd_ls_mark_seen(c, rec.id, rec.unseen);
	lease_record_clear(&rec);
	return rc;
}

const struct tui_cmd tui_cmd_screen = {
	.name = "screen",
	.usage = "ID [--scrollback] [--json]",
	.help = "Print the endpoint's current screen as text, one line per "
		"row, trailing\nblanks trimmed (--scrollback first prints the "
		"scrollback, oldest first, taken with the screen).\n--json prints the screen with "
		"its size, cursor, modes, title and attribute\nruns. After the agent ends, prints the "
		"final screen its holder kept. Control and\nbidi characters "
		"are escaped. Shown on a terminal, a done or "
		"failed\nlease counts as seen; --json and output "
		"into a pipe or file\nleave its unseen mark.",
	.exec = screen_exec,
};

/* Unescape \r \n \t \e \a \b \\ \xHH \0NN in TEXT. */
static size_t
unescape(const char *in, char *out)
{
	size_t n = 0;

	while (*in != '\0') {
		if (*in != '\\' || in[1] == '\0') {
			out[n++] = *in++;
			continue;
		}
		in++;
		switch (*in) {
		case 'r': out[n++] = '\r'; in++; break;
		case 'n': out[n++] = '\n'; in++; break;
		case 't': out[n++] = '\t'; in++; break;
		case 'e': out[n++] = '\033'; in++; break;
		case 'a': out[n++] = '\a'; in++; break;
		case 'b': out[n++] = '\b'; in++; break;
		case '\\': out[n++] = '\\'; in++; break;
		case 'x': {
			unsigned v = 0;
			int k;

			in++;
			for (k = 0; k < 2 && ((*in >= '0' && *in <= '9') ||
			    (*in >= 'a' && *in <= 'f') ||
			    (*in >= 'A' && *in <= 'F')); k++, in++)
				v = v * 16 + (unsigned)(*in <= '9' ? *in - '0' :
				    (*in | 0x20) - 'a' + 10);
			out[n++] = (char)v;
			break;
		}
		default:
			out[n++] = '\\';
			out[n++] = *in++;
			break;
		}
	}
	return n;
}

/* Wait for the holder's verdict on a request: OK/status, or ERROR. */
static int
await_verdict(struct tui_ctx *c, struct pty_holder_client *cl, uint8_t want)
{
	const uint8_t *p;
	size_t plen;
	uint8_t type;
	int rc;

	while ((rc = pty_holder_client_recv(cl, &type, &p, &plen,
	    EP_TIMEOUT_MS)) == 1) {
		if (type == PTY_W_ERROR && plen >= 4) {
			fprintf(stderr, "corral %s: holder refused: ", c->cmd);
			tui_ctx_put_escaped(stderr, (const char *)p + 4,
			    plen - 4);
			fputc('\n', stderr);
			return TUI_EXIT_FAIL;
		}
		if (type == want)
			return TUI_EXIT_OK;
	}
	return tui_ctx_err(c, "holder did not answer: %s",
	    rc == 0 ? "timed out" : pty_strerror(rc));
}

static int
send_exec(struct tui_ctx *c, int argc, char **argv)
{
	struct lease_record rec;
	struct pty_holder_client *cl = NULL;
	int rc;

	if (argc != 3 || argv[1][0] == '-')
		return tui_ctx_usage(c, "expected: corral send ID TEXT");
	if ((rc = tui_ctx_find_lease(c, argv[1], &rec)) != 0)
		return rc;
	if ((rc = open_holder(c, &rec, 0, &cl)) < 0) {
		lease_record_clear(&rec);
		return tui_ctx_err(c,
		    "lease %s has no live holder: %s", argv[1],
		    pty_strerror(rc));
	}
	lease_record_clear(&rec);
	return tui_cmd_send_live(c, cl, argv[2]);
}

int
tui_cmd_send_live(struct tui_ctx *c, struct pty_holder_client *cl,
    const char *text)
{
	uint8_t seq[4] = { 1, 0, 0, 0 };
	char *buf;
	size_t n;
	int rc;

	if ((buf = malloc(strlen(text) + 1)) == NULL) {
		pty_holder_client_free(cl);
		return tui_ctx_err(c, "out of memory");
	}
	n = unescape(text, buf);
	rc = pty_holder_client_send(cl, PTY_W_INPUT, buf, n);
	free(buf);
	/* A status round trip after the input: any refusal comes first. */
	if (rc == 0)
		rc = pty_holder_client_send(cl, PTY_W_STATUS, seq, sizeof seq);
	rc = rc < 0 ? tui_ctx_err(c, "send: %s", pty_strerror(rc)) :
		      await_verdict(c, cl, PTY_W_STATUS_REPLY);
	pty_holder_client_free(cl);
	return rc;
}

const struct tui_cmd tui_cmd_send = {
	.name = "send",
	.usage = "ID TEXT",
	.help = "Type TEXT into the endpoint. Escapes: \\r (Enter), \\n, \\t, "
		"\\e (Esc), \\a,\n\\b, \\\\ and \\xHH. A trusted_local lease "
		"started without --allow-control\nrefuses, and the command "
		"fails.",
	.exec = send_exec,
};

/*
 * The holder writes the journal off its loop, just after the agent's exit
 * reaches its clients: wait (bounded) until the journal has the end.
 */
static bool
recorded(struct tui_ctx *c, const char *id)
{
	struct lease_record now;
	bool done = false;
	int i;

	for (i = 0; i < EP_RECORDED_MS / 20 && !done; i++) {
		if (lease_record_get(c->store, id, &now) == 0) {
			done = lease_fsm_state_final(now.state);
			lease_record_clear(&now);
		}
		if (!done)
			usleep(20000);
	}
	return done;
}

static int
cancel_exec(struct tui_ctx *c, int argc, char **argv)
{
	struct lease_record rec, now;
	struct pty_holder_client *cl = NULL;
	int rc;

	if (argc != 2 || argv[1][0] == '-')
		return tui_ctx_usage(c, "expected: corral cancel ID");
	if ((rc = tui_ctx_find_lease(c, argv[1], &rec)) != 0)
		return rc;
	if (lease_fsm_state_final(rec.state)) {
		rc = tui_ctx_err(c, "lease %s already ended (%s)", rec.id,
		    lease_fsm_state_name(rec.state));
		lease_record_clear(&rec);
		return rc;
	}
	if ((rc = open_holder(c, &rec, PTY_HELLO_LIVE, &cl)) < 0) {
		rc = tui_ctx_err(c, "lease %s has no live holder (%s): run "
		    "'corral reconcile'", rec.id, pty_strerror(rc));
		lease_record_clear(&rec);
		return rc;
	}
	rc = pty_holder_client_send(cl, PTY_W_CANCEL, NULL, 0);
	if (rc < 0)
		rc = tui_ctx_err(c, "cancel: %s", pty_strerror(rc));
	else
		rc = await_verdict(c, cl, PTY_W_OK);
	if (rc == TUI_EXIT_OK) {
		/* Wait for the escalation to end the agent (bounded). */
		const uint8_t *p;
		size_t plen;
		uint8_t type;
		int r;

		while ((r = pty_holder_client_recv(cl, &type, &p, &plen,
		    10000)) == 1 && type != PTY_W_EXIT)
			;
		/*
		 * Its agent had exited already (its checks ran): the holder
		 * stops them, then closes; the journal says how it ended.
		 */
		if (r < 0 && lease_record_get(c->store, rec.id, &now) == 0) {
			if (now.state == LEASE_STATE_CANCELLED)
				r = 1;
			lease_record_clear(&now);
		}
		if (r != 1)
			rc = tui_ctx_err(c, "lease %s did not end in time",
			    rec.id);
		else if (!recorded(c, rec.id))
			printf("%s cancelled (the journal is busy: its holder "
			    "records it as soon as it can)\n", rec.id);
		else
			printf("%s cancelled\n", rec.id);
	}
	pty_holder_client_free(cl);
	lease_record_clear(&rec);
	return rc;
}

/* The question the lease's holder sees now, or NULL (printed why). */
static json_t *
ask_question(struct tui_ctx *c, struct pty_holder_client *cl, const char *id)
{
	json_t *st, *q;
	char *js;
	int err = 0;

	if ((js = pty_holder_client_status(cl, EP_TIMEOUT_MS, &err)) == NULL) {
		tui_ctx_err(c, "holder did not answer: %s", pty_strerror(err));
		return NULL;
	}
	st = json_loads(js, 0, NULL);
	free(js);
	q = json_object_get(st, "question");
	if (!json_is_object(q)) {
		tui_ctx_err(c, "lease %s asks no question now (it is %s)", id,
		    json_string_value(json_object_get(st, "activity")) ?
		    json_string_value(json_object_get(st, "activity")) : "?");
		json_decref(st);
		return NULL;
	}
	json_incref(q);
	json_decref(st);
	return q;
}

static int
answer_exec(struct tui_ctx *c, int argc, char **argv)
{
	struct lease_record rec;
	struct pty_holder_client *cl = NULL;
	const char *want = NULL, *qt;
	uint8_t msg[8 + PTY_DIALOG_ANSWER_MAX];
	unsigned long long dg;
	json_t *q;
	size_t n;
	char *end;
	int rc, at = 1;

	/* ID OPTION, --digest HEX before or after (an OPTION may start '-') */
	if (argc == 5 && strcmp(argv[3], "--digest") == 0)
		want = argv[4];
	else if (argc == 5 && strcmp(argv[1], "--digest") == 0) {
		want = argv[2];
		at = 3;
	} else if (argc != 3)
		argc = 0;
	if (argc == 0 || argv[at][0] == '-')
		return tui_ctx_usage(c,
		    "expected: corral answer ID OPTION [--digest HEX]");
	n = strlen(argv[at + 1]);
	if (n == 0 || n > PTY_DIALOG_ANSWER_MAX)
		return tui_ctx_usage(c, "OPTION is 1 to %d bytes",
		    PTY_DIALOG_ANSWER_MAX);
	if ((rc = tui_ctx_find_lease(c, argv[at], &rec)) != 0)
		return rc;
	if ((rc = open_holder(c, &rec, 0, &cl)) < 0) {
		rc = tui_ctx_err(c, "lease %s has no live holder: %s", rec.id,
		    pty_strerror(rc));
		lease_record_clear(&rec);
		return rc;
	}
	if ((q = ask_question(c, cl, rec.id)) == NULL) {
		pty_holder_client_free(cl);
		lease_record_clear(&rec);
		return TUI_EXIT_FAIL;
	}
	/* Without --digest: the question as it is now, read just above. */
	if (want == NULL)
		want = json_string_value(json_object_get(q, "digest"));
	dg = want != NULL ? strtoull(want, &end, 16) : 0;
	if (want == NULL || strlen(want) != 16 || *end != '\0') {
		json_decref(q);
		pty_holder_client_free(cl);
		lease_record_clear(&rec);
		return tui_ctx_usage(c, "--digest is the question's 16 hex "
		    "digits (ls --json: question.digest)");
	}
	for (int i = 0; i < 8; i++)
		msg[i] = (uint8_t)(dg >> (8 * i));
	memcpy(msg + 8, argv[at + 1], n);
	rc = pty_holder_client_send(cl, PTY_W_ANSWER, msg, 8 + n);
	rc = rc < 0 ? tui_ctx_err(c, "answer: %s", pty_strerror(rc)) :
	    await_verdict(c, cl, PTY_W_OK);
	if (rc == TUI_EXIT_OK) {
		qt = json_string_value(json_object_get(q, "text"));
		printf("%s: answered ", rec.id);
		tui_ctx_put_escaped(stdout, argv[at + 1], n);
		printf(" to: ");
		tui_ctx_put_escaped(stdout, qt != NULL ? qt : "",
		    qt != NULL ? strcspn(qt, "\n") : 0);
		putchar('\n');
	}
	json_decref(q);
	pty_holder_client_free(cl);
	lease_record_clear(&rec);
	return rc;
}

const struct tui_cmd tui_cmd_answer = {
	.name = "answer",
	.usage = "ID OPTION [--digest HEX]",
	.help = "Answer the question the lease's agent asks on its screen "
		"(a permission\ndialog, a choice, a y/n): OPTION is an "
		"option's key, its number in\nthe list, its label or the "
		"start of its label (`corral show ID --json`\nlists them "
		"under question). Only the keys that pick that option are\n"
		"typed. With --digest, only if the question is still the one "
		"with that\ndigest; without it, the one on the screen now. "
		"The receipt records who\nanswered what.",
	.exec = answer_exec,
};

const struct tui_cmd tui_cmd_cancel = {
	.name = "cancel",
	.usage = "ID",
	.help = "Cancel the lease: SIGINT, then SIGTERM, then "
		"SIGKILL to every\nprocess of the lease, 2 s apart; each step "
		"goes into the receipt. Waits\nuntil the agent has ended.",
	.exec = cancel_exec,
};
