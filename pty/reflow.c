/*
 * reflow.c: lines rewrapped at a new width when the screen is resized, as
 * tmux 3.3a does (SPEC 4.5; issue 22). The model (screen.c) hands over
 * its lines oldest first, scrollback then screen, each with the length it
 * used and whether it wrapped into the next one; a run of wrapped lines is
 * one line of text, cut again at the new width. A line that needs no
 * change is kept as it is (a scrollback line stays packed), so only the
 * lines that wrapped or no longer fit are unpacked, one at a time: two
 * lines' cells are held, whatever the scrollback holds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pty/pty.h"
#include "pty/pty_int.h"

struct rf {
	const struct pty__reflow_io *io;
	void *ud;
	int ncols;
	struct pty_cell *out;	/* the new line being filled */
	int n;			/* its cells */
	size_t lines;		/* lines handed on (kept or put) so far */
};

/* Hand on the line being filled; it continues on the next when wrapped. */
static int
flush(struct rf *r, bool wrapped)
{
	int rc = r->io->put(r->ud, r->out, r->n, wrapped);

	r->lines++;
	r->n = 0;
	return rc;
}

/*
 * Add cell c (with half, its right half, when it is wide) to the line
 * being filled, which wraps first when c does not fit; returns the column
 * c went to, or -ENOMEM.
 */
static int
place(struct rf *r, const struct pty_cell *c, const struct pty_cell *half)
{
	int w = c->width == 2 ? 2 : 1, rc, at;

	if (w > r->ncols) {
		/* One column: a wide character cannot be shown; a blank. */
		struct pty_cell b = *c;

		memset(b.cp, 0, sizeof b.cp);
		b.width = 1;
		return place(r, &b, NULL);
	}
	if (r->n + w > r->ncols) {
		rc = flush(r, true);
		if (rc < 0)
			return rc;
	}
	at = r->n;
	r->out[r->n++] = *c;
	if (w == 2)
		r->out[r->n++] = *half;
	return at;
}

int
pty__reflow(const struct pty__reflow_io *io, void *ud, int ocols,
    int ncols, struct pty__reflow_cursor *cur)
{
	struct rf r = { .io = io, .ud = ud, .ncols = ncols };
	struct pty_cell *in;
	struct pty__reflow_cursor to = *cur;
	bool end_pending = false, found = false;
	size_t i = 0;
	int rc = 0;

	if (ocols < 1 || ncols < 1)
		return -EINVAL;
	in = malloc(sizeof *in * (size_t)ocols);
	r.out = malloc(sizeof *r.out * (size_t)ncols);
	if (in == NULL || r.out == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	while (i < io->nlines && rc == 0) {
		bool wrapped, first = true;
		int used;

		io->peek(ud, i, &used, &wrapped);
		if (!wrapped && used <= ncols) {
			/* Fits and ends here: kept as it is. */
			if (!found && (i == cur->line || end_pending)) {
				to.line = r.lines;
				to.col = cur->at_end || end_pending ? used :
				    cur->col;
				found = true;
			}
			end_pending = false;
			rc = io->keep(ud, i++);
			r.lines++;
			continue;
		}
		/* One line of text over lines i, i + 1, ...: cut again. */
		r.n = 0;
		for (;;) {
			int x, at;

			if (!first) {
				io->peek(ud, i, &used, &wrapped);
				if (used == 0 && !wrapped) {
					/*
					 * An empty last line stays a line of
					 * its own (tmux): what came before
					 * still wraps into it.
					 */
					rc = flush(&r, true);
					break;
				}
			}
			first = false;
			used = io->get(ud, i, in, &wrapped);
			if (used > ocols)
				used = ocols;
			for (x = 0; x < used && rc == 0; x++) {
				struct pty_cell half;
				bool wide = in[x].width == 2;

				if (in[x].width == 0)
					continue;	/* placed with its left */
				if (wide) {
					half = x + 1 < used ? in[x + 1] : in[x];
					memset(half.cp, 0, sizeof half.cp);
					half.width = 0;
				}
				at = place(&r, &in[x], wide ? &half : NULL);
				if (at < 0) {
					rc = at;
					break;
				}
				if (!found && i == cur->line && !cur->at_end &&
				    (cur->col == x || (wide && cur->col == x + 1))) {
					to.line = r.lines;
					to.col = at + (cur->col - x);
					found = true;
				}
			}
			if (rc < 0)
				break;
			if (i == cur->line && cur->at_end && !found)
				end_pending = true;
			i++;
			if (!wrapped || i == io->nlines) {
				int n = r.n;

				rc = flush(&r, wrapped);
				if (end_pending && !found) {
					to.line = r.lines - 1;
					to.col = n;
					found = true;
					end_pending = false;
				}
				break;
			}
		}
	}
	if (rc == 0 && found)
		*cur = to;
out:
	free(in);
	free(r.out);
	return rc;
}
