/*
 * pty_int.h: declarations shared between pty/ files but not exported
 * (STYLE A), one block per file: the packed-line primitives that screen.c
 * uses to pack its own cells straight into scrollback (line.c, cell.c),
 * the rewrapping of lines on a resize (reflow.c),
 * the /proc samplers (facts.c), the key encoding (keys.c), and the VT
 * filter (vtfilter.c, vtfilter_seq.c) with the sink through which it
 * hands the model (screen.c) what it passes on and what it found.
 */
#ifndef CORRAL_PTY_INT_H
#define CORRAL_PTY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pty/pty.h"

/* ------------------------------------------------------------------ */
/* cell.c: the text of cells                                            */

/* Longest UTF-8 text of one cell: PTY_CELL_MAXCP codepoints of 4 bytes. */
#define PTY__CELL_TEXTMAX (4 * PTY_CELL_MAXCP)
/* UTF-8 of cp (U+FFFD for surrogates/out of range) at p; returns 1..4. */
int pty__cell_utf8_put(uint8_t *p, uint32_t cp);

/* ------------------------------------------------------------------ */
/* line.c: cells packed into lines (screen.c packs its own cells)       */

/* Longest packed line, in cells (the codec refuses more). */
#define PTY__LINE_MAXCELLS 4096
/* Cell text bytes (see line.c for the whole format). */
#define PTY__LC_BLANK 0x00u	/* empty cell */
#define PTY__LC_WIDE2 0x80u	/* right half of a wide character */
#define PTY__LC_TEXT 0x80u	/* 0x80 + n: n (1..24) UTF-8 bytes follow */
/* Run header: u16 count, u32 fg, u32 bg, u16 attrs. */
#define PTY__LINE_RUNHDR 12
#define PTY__ATTR_ALL 0x01ffu

/* Write a u16 / u32 little-endian at p. */
void pty__line_put16(uint8_t *p, uint16_t v);
void pty__line_put32(uint8_t *p, uint32_t v);
/*
 * Start a run at p (count patched later with pty__line_put16 on p);
 * returns the position after the run header.
 */
uint8_t *pty__line_run(uint8_t *p, uint32_t fg, uint32_t bg, uint16_t attrs);
/*
 * Encode one cell's text (cps[0..n), n >= 1, cps[0] != 0) at p; returns
 * the position after it. At most 1 + PTY__CELL_TEXTMAX bytes.
 */
uint8_t *pty__line_text(uint8_t *p, const uint32_t *cps, int n);

/* ------------------------------------------------------------------ */
/* reflow.c: lines rewrapped at a new width (the model's resize)        */

/*
 * The lines to reflow, oldest first (scrollback, then the screen), as the
 * model keeps them: each has its used length (the cells up to the last one
 * written, as tmux counts them) and whether it continues on the next
 * line (it wrapped). get unpacks line i into cells (ocols of them) and
 * returns its used length; keep hands line i on unchanged; put hands on a
 * new line of n cells. keep and put return 0 or -ENOMEM.
 */
struct pty__reflow_io {
	size_t nlines;
	void (*peek)(void *ud, size_t i, int *used, bool *wrapped);
	int (*get)(void *ud, size_t i, struct pty_cell *cells, bool *wrapped);
	int (*keep)(void *ud, size_t i);
	int (*put)(void *ud, const struct pty_cell *cells, int n, bool wrapped);
};

/*
 * Where the cursor is: on line, at col, or past the end of what the line
 * holds (at_end: tmux then puts it at the end of its unwrapped line).
 * The reflow reports the new line (counted in lines put or kept) and col.
 */
struct pty__reflow_cursor {
	size_t line;
	int col;
	bool at_end;
};

/*
 * Rewrap every line from ocols to ncols columns (as tmux 3.3a's reflow):
 * a line that wrapped is joined with the ones it continues on, a line
 * longer than ncols is split, wide characters stay whole, anything else
 * is kept as it is. Returns 0 or -ENOMEM (then what was put is partial).
 */
int pty__reflow(const struct pty__reflow_io *io, void *ud, int ocols,
    int ncols, struct pty__reflow_cursor *cur);

/* ------------------------------------------------------------------ */
/* facts.c: process facts from /proc, sampled by the holder (SPEC 5.3)  */

/*
 * Sample facts for the session led by sid on the PTY master fd. extra
 * (n of them, may be NULL): more processes of the agent, e.g. its
 * tracking cgroup's, counted for CPU when the session's tree lacks them
 * (a daemon that left the session and was reparented away).
 */
int pty__facts_sample(int master_fd, pid_t sid, const pid_t *extra,
    size_t nextra, struct pty_facts *out);
/* Every pid whose session is sid (up to max); returns the count. */
int pty__facts_session_pids(pid_t sid, pid_t *pids, int max);
/* Process start time (field 22 of /proc/PID/stat), 0 if gone. */
uint64_t pty__facts_starttime(pid_t pid);
/*
 * The argv of pid from /proc/PID/cmdline into buf (NUL-separated), with
 * pointers in argv[max]; returns argc (0 when gone or unreadable).
 */
int pty__facts_cmdline(pid_t pid, char *buf, size_t bufsz, const char **argv,
    int max);

/* ------------------------------------------------------------------ */
/* keys.c: keys, characters and pastes encoded for the program          */

/*
 * The modes the encoding follows, as libvterm applies them (the filter
 * passes each parameter of a mode sequence on alone, so libvterm's
 * reading and struct pty_modes agree).
 */
struct pty__keys_modes {
	bool app_cursor;	/* DECCKM: cursor keys as SS3 */
	bool newline;		/* LNM: Enter sends CR LF */
	bool c1_8bit;		/* S8C1T: CSI and SS3 as 8-bit C1 bytes */
	bool paste_marks;	/* 2004: a paste goes between CSI 200~/201~ */
};

/* Room for the longest encoding. */
#define PTY__KEYS_MAX 32
/*
 * Encode key (with PTY_MOD_* mods) or character cp into buf (at least
 * PTY__KEYS_MAX bytes); returns the length, 0 for a key or codepoint that
 * sends nothing (PTY_KEY_NONE, out of range, a surrogate, 0).
 */
size_t pty__keys_key(const struct pty__keys_modes *, enum pty_key,
    unsigned mods, char *buf);
size_t pty__keys_unichar(const struct pty__keys_modes *, uint32_t cp,
    unsigned mods, char *buf);
/*
 * Paste len bytes through out. When bracketed (the program set 2004, as
 * struct pty_modes reports it) every end mark inside the text is dropped
 * and the text goes between the marks if paste_marks; else it goes as is.
 */
void pty__keys_paste(const struct pty__keys_modes *, bool bracketed,
    const char *buf, size_t len, pty_screen_output_cb out, void *ud);

/* ------------------------------------------------------------------ */
/* vtfilter.c: the VT stream filter in front of libvterm (screen.c)     */

/* Bytes of an OSC/DCS payload passed on (and reported); the rest dropped. */
#define PTY__OSC_MAX 4096
/* DECSET parameters the filter remembers per CSI (as libvterm's 16). */
#define PTY__VTF_NPARAM 16

/*
 * Bytes per pass: 0.1.4 keeps a codepoint array of the write's length on
 * the stack (a 16 MB write overflows it).
 */
#define PTY__VTF_WRITE_MAX 8192

/* What the sink did with an ASCII run (pty__vtfilter_sink.ascii_run). */
enum pty__vtf_fast {
	PTY__VTF_FAST_NO,	/* not written: the bytes go on as usual */
	PTY__VTF_FAST_DONE,	/* written, the cursor moved past them */
	PTY__VTF_FAST_STOP,	/* written, but never take the fast path again */
};

/* What the sink does with the cursor's save slot (cursor). */
enum pty__vtf_cursor {
	PTY__VTF_CURSOR_SAVE,
	PTY__VTF_CURSOR_RESTORE,
	PTY__VTF_CURSOR_FORGET,
};

/* What a DECSC saves of the filter's own state, one per screen. */
struct pty__vtf_saved {
	bool origin;		/* DECOM */
	uint8_t gl;		/* G-set in GL */
	uint8_t g_des[4];	/* G0..G3 designations, 0 if none */
	uint16_t pen;		/* PTY_ATTR_FAINT, PTY_ATTR_CONCEAL */
};

/*
 * Where the filter's output goes: the model (screen.c) in front of which
 * it sits. Bytes to parse, in order, through pass; the rest are events the
 * filter found in the stream and the model carries out (they need its
 * grid, libvterm's cursor or its last glyph). Every callback runs inside
 * pty__vtfilter_feed and must not feed the filter.
 */
struct pty__vtfilter_sink {
	/* Bytes for libvterm (at most PTY__VTF_WRITE_MAX per call). */
	void (*pass)(const uint8_t *p, size_t n, void *ud);
	/* Bytes back to the program (a DECRQSS answer). */
	void (*reply)(const char *p, size_t n, void *ud);
	/* REP (CSI Pn b): print the last glyph count times (0 is 1). */
	void (*rep)(uint32_t count, void *ud);
	/*
	 * The cursor's save slot of the screen in use (DECSC, DECRC, SCOSC,
	 * SCORC, DECSET 1048/1049; SPEC 4.1): save or restore position and
	 * pen, or forget both slots (RIS). On a restore the filter has passed
	 * on the saved charsets and origin mode already; the model puts the
	 * pen back and the cursor inside the screen.
	 */
	void (*cursor)(enum pty__vtf_cursor op, void *ud);
	/*
	 * The pen's attributes libvterm 0.1.4 does not keep, after an SGR
	 * (or RIS): faint (SGR 2) and conceal (SGR 8), both PTY_ATTR_* bits.
	 */
	void (*pen)(uint16_t attrs, void *ud);
	/*
	 * Combining mark cp starts a write right after text: join it to the
	 * glyph before, as if unsplit. Returns whether it did (false: the
	 * mark's bytes go on as usual).
	 */
	bool (*join_mark)(uint32_t cp, void *ud);
	/*
	 * The fast path: p[0..m) (printable ASCII, m >= 1) right after a glyph
	 * just passed; write them as cells at the cursor and move it past, or
	 * not (then they are passed as bytes).
	 */
	enum pty__vtf_fast (*ascii_run)(const uint8_t *p, size_t m, void *ud);
};

/* The filter's state: embedded in the screen, no allocation. */
struct pty__vtfilter {
	const struct pty__vtfilter_sink *sink;
	void *ud;
	uint8_t st;
	uint8_t skind;
	bool esc_virtual;	/* the pending ESC was not passed on yet */
	bool esc_cut;		/* it cut a sequence libvterm was given */
	bool csi_priv;		/* leader '?' */
	bool csi_other;		/* another leader, or junk */
	bool csi_started;	/* past the leader bytes */
	uint8_t csi_inter;	/* last intermediate byte, 0 if none */
	uint8_t np;
	uint32_t param[PTY__VTF_NPARAM];
	uint16_t colon;		/* bit i: param[i] follows a ':' */
	uint8_t u8[4];		/* held partial UTF-8 at the end of a feed */
	uint8_t nu8;
	bool struncated;
	uint8_t esc_inter;	/* first intermediate after ESC */
	uint8_t esc_ninter;
	/* The modes libvterm 0.1.4 has no getter for (struct pty_modes). */
	bool app_cursor;	/* DECCKM */
	bool app_keypad;	/* DECKPAM */
	bool bracketed_paste;	/* 2004 */
	bool mouse_sgr;		/* 1006 */
	bool focus_events;	/* 1004 */
	struct pty__keys_modes keys;	/* libvterm's reading, for keys.c */
	/* What the ASCII fast path must know of libvterm. */
	bool insert;		/* IRM */
	bool origin;		/* DECOM */
	uint8_t gl;		/* G-set in GL: SI/SO/LS2/LS3 */
	bool g_plain[4];	/* G0..G3 map ASCII to itself */
	bool nofast;		/* the sink said stop: never again */
	uint8_t text_end;	/* the last feed ended inside text (TB_*) */
	bool g_utf8[4];		/* G0..G3 still decode UTF-8 (undesignated) */
	uint8_t g_des[4];	/* G0..G3 designation final byte, 0 if none */
	bool ss;		/* a single shift (ESC N, ESC O) is pending */
	bool text_held;		/* text in the span not yet passed on */
	bool alt;		/* the alternate screen is in use */
	bool lrmm;		/* DECLRMM: CSI s sets margins, not a save */
	uint16_t pen;		/* what the sink's pen says (SGR 2, 8) */
	struct pty__vtf_saved saved[2];	/* DECSC slots: main, alternate */
	size_t slen;		/* bytes in sbuf, introducer included */
	char sbuf[2 + PTY__OSC_MAX + 2];
};

/* Start in ground with every mode off; sink and ud are borrowed. */
void pty__vtfilter_init(struct pty__vtfilter *,
    const struct pty__vtfilter_sink *sink, void *ud);
/*
 * Filter len bytes of program output: whatever the bytes and however they
 * are cut into calls, the sink sees the same passes and events (a sequence
 * or character cut at the end waits for the next call).
 */
void pty__vtfilter_feed(struct pty__vtfilter *, const uint8_t *b,
    size_t len);
/* Drop a sequence or character cut at the end of the last feed: back to
 * ground (the model reset libvterm's parser, e.g. on a resize). */
void pty__vtfilter_cut(struct pty__vtfilter *);
/* Bytes on to libvterm, through the sink (vtfilter.c). */
void pty__vtf_pass(struct pty__vtfilter *, const void *p, size_t n);

/* ------------------------------------------------------------------ */
/* vtfilter_seq.c: the sequences the filter carries out itself          */

/* An SGR rewritten for 0.1.4 (pty__vtf_sgr_build), at most. */
#define PTY__VTF_SGR_OUT_MAX (4 + PTY__VTF_NPARAM * 6)

/* The input modes and G-sets as after RIS. */
void pty__vtf_modes_reset(struct pty__vtfilter *);
/* DECSC (ESC 7, SCOSC) into the slot of the screen in use; DECRC back. */
void pty__vtf_cursor_save(struct pty__vtfilter *);
void pty__vtf_cursor_restore(struct pty__vtfilter *);
/*
 * A CSI's final byte c is next for libvterm: whether the filter takes the
 * sequence over (cancelled there; pty__vtf_csi_take carries it out).
 */
bool pty__vtf_csi_final(struct pty__vtfilter *, uint8_t c);
void pty__vtf_csi_take(struct pty__vtfilter *, uint8_t c);
/* Whether the SGR must be rewritten; *pen gets the new faint/conceal. */
bool pty__vtf_sgr_scan(const struct pty__vtfilter *, uint16_t *pen);
/* The SGR in the forms 0.1.4 reads into out; returns its length (0: none). */
size_t pty__vtf_sgr_build(const struct pty__vtfilter *, char *out);
/* C0 controls that switch the G-set in GL (SI, SO). */
void pty__vtf_c0_track(struct pty__vtfilter *, uint8_t c);
/* ESC I F with one intermediate: G-set designations (SCS). */
void pty__vtf_esc_final(struct pty__vtfilter *, uint8_t c);

#endif /* CORRAL_PTY_INT_H */
