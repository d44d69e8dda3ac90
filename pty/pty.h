/*
 * pty.h: the public interface of the endpoint module (STYLE A), in one
 * block per file, each headed by the file that defines it and gives its
 * prefix: errors (error.c), cells (cell.c), the screen model (screen.c),
 * packed lines (line.c), frame buffers and readers (wbuf.c, rd.c), the wire
 * protocol between holders and their clients (wire.c), a client's mirror
 * of a screen (mirror.c), PTY processes (proc.c), process facts
 * (facts.c), the holder process (holder.c; its socket server is
 * holder_server.c, inside), the client side of a holder socket
 * (holder_client.c), the lifecycle detector (detect.c) and its rules
 * (rules.c). What only pty/ files share is in pty_int.h and
 * pty_holder_int.h.
 *
 * Nothing here exposes a libvterm, libuv-internal or curses type: cells are
 * our own struct pty_cell (SPEC 4.1, STYLE I.6).
 */
#ifndef CORRAL_PTY_H
#define CORRAL_PTY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PTY_NODISCARD __attribute__((warn_unused_result))

struct pty_screen;
struct pty_proc;
struct pty_holder;
struct pty_holder_client;
struct pty_rules;
struct sbx_plan;
struct uv_loop_s;

/* ------------------------------------------------------------------ */
/* error.c: the module's error codes                                   */

/* Errors: negative errno for OS failures, these below for our own. */
enum {
	PTY_EBASE = -20000,
	PTY_EPROTO,	/* malformed wire frame */
	PTY_ETOOBIG,	/* frame or line over its cap */
	PTY_EDENIED,	/* holder refused (trusted_local without control) */
	PTY_ETIMEDOUT,	/* holder did not answer in time */
	PTY_EEXEC,	/* the command could not be executed */
	PTY_ECLOSED,	/* peer went away */
};
const char *pty_strerror(int);

/* ------------------------------------------------------------------ */
/* cell.c: cells, colours, attributes                                  */

/*
 * A colour packed in 32 bits: the top byte is the kind, the rest is an
 * index or 24-bit RGB.
 */
#define PTY_COLOR_DEFAULT 0u
#define PTY_COLOR_INDEXED(i) (0x01000000u | ((uint32_t)(i) & 0xffu))
#define PTY_COLOR_RGB(r, g, b)                                            \
	(0x02000000u | (((uint32_t)(r) & 0xffu) << 16) |                  \
	    (((uint32_t)(g) & 0xffu) << 8) | ((uint32_t)(b) & 0xffu))
#define PTY_COLOR_KIND(c) ((c) >> 24)
#define PTY_COLOR_KIND_DEFAULT 0u
#define PTY_COLOR_KIND_INDEXED 1u
#define PTY_COLOR_KIND_RGB 2u

#define PTY_ATTR_BOLD 0x0001u
#define PTY_ATTR_UNDERLINE 0x0006u /* 2 bits: 1 single, 2 double, 3 curly */
#define PTY_ATTR_UNDERLINE_SHIFT 1
#define PTY_ATTR_ITALIC 0x0008u
#define PTY_ATTR_BLINK 0x0010u
#define PTY_ATTR_REVERSE 0x0020u
#define PTY_ATTR_STRIKE 0x0040u
#define PTY_ATTR_CONCEAL 0x0080u
#define PTY_ATTR_FAINT 0x0100u

/*
 * A base character plus its combining marks, as tmux keeps them: at most
 * PTY_CELL_MAXBYTES bytes of UTF-8 (ten 2-byte marks on an ASCII letter,
 * six 3-byte ones on a CJK character); marks past that are dropped.
 */
#define PTY_CELL_MAXBYTES 21
#define PTY_CELL_MAXCP 11

/*
 * One screen cell as the model exposes it. cp[0] == 0 is an empty (blank)
 * cell. width is 1, 2 for the left half of a wide character, and 0 for the
 * right half (which carries no characters).
 */
struct pty_cell {
	uint32_t cp[PTY_CELL_MAXCP];
	uint32_t fg;
	uint32_t bg;
	uint16_t attrs;
	uint8_t width;
};
/* Fill n cells with blanks. */
void pty_cell_blank(struct pty_cell *cells, int n);
/* UTF-8 of one cell's characters into buf (bufsz >= 4*PTY_CELL_MAXCP+1). */
size_t pty_cell_utf8(const struct pty_cell *, char *buf, size_t bufsz);

/* ------------------------------------------------------------------ */
/* screen.c: the pure terminal model of one endpoint                   */

#define PTY_SCREEN_SB_DEFAULT 10000
#define PTY_SCREEN_TITLE_MAX 1024

/* Mouse reporting modes (DECSET 1000/1002/1003). */
enum pty_mouse { PTY_MOUSE_NONE, PTY_MOUSE_CLICK, PTY_MOUSE_DRAG, PTY_MOUSE_MOVE };

/* Cursor shapes (DECSCUSR). */
enum pty_cursor_shape {
	PTY_CURSOR_BLOCK = 1,
	PTY_CURSOR_UNDERLINE,
	PTY_CURSOR_BAR
};

struct pty_cursor {
	int row;
	int col;
	bool visible;
	bool blink;
	uint8_t shape; /* enum pty_cursor_shape */
};

/* Input and display modes the agent set (SPEC 4.5). */
struct pty_modes {
	bool altscreen;
	bool app_cursor;	/* DECCKM */
	bool app_keypad;	/* DECKPAM */
	bool bracketed_paste;	/* 2004 */
	bool mouse_sgr;		/* 1006 */
	bool reverse;		/* DECSCNM */
	bool focus_events;	/* 1004 */
	uint8_t mouse;		/* enum pty_mouse */
};

/* Terminal signals the screen saw, for the lifecycle detector (SPEC 5.3). */
enum pty_screen_event_kind {
	PTY_SEV_BELL,
	PTY_SEV_TITLE,	   /* OSC 0/2; text is the new title */
	PTY_SEV_OSC,	   /* any other OSC: "NUM;payload", at most 4096 bytes */
};
typedef void (*pty_screen_event_cb)(enum pty_screen_event_kind,
    const char *text, size_t len, void *ud);
/* Bytes the terminal sends back to the program (DA, DSR/CPR replies, keys). */
typedef void (*pty_screen_output_cb)(const char *buf, size_t len, void *ud);

/*
 * Create a screen of rows x cols (each 1..1000) keeping at most sb_max lines
 * of scrollback (0 keeps none; above 4M lines is taken as 4M). Every row
 * starts dirty. Returns 0 or -EINVAL/-ENOMEM.
 */
PTY_NODISCARD int pty_screen_new(struct pty_screen **out, int rows, int cols,
    size_t sb_max);
void pty_screen_free(struct pty_screen *);
void pty_screen_set_output(struct pty_screen *, pty_screen_output_cb, void *ud);
/*
 * Give back what the screen holds only while it works (issue 17): its
 * scratch buffers. Nothing it shows or keeps changes; the next feed or
 * resize takes what it needs.
 */
void pty_screen_trim(struct pty_screen *);
void pty_screen_set_event(struct pty_screen *, pty_screen_event_cb, void *ud);
/*
 * Feed bytes from the program; never fails, whatever the bytes, and how
 * they are cut into calls does not matter (a sequence or a character split
 * across calls waits for its end; strings such as OSC are cut to 4096
 * bytes). The callbacks run inside this call and must not feed, resize or
 * free the screen.
 */
void pty_screen_feed(struct pty_screen *, const char *buf, size_t len);
/*
 * Resize (no reflow: rows are cut or padded). The scrollback keeps its
 * lines; on the primary screen, shrinking pushes the lines above the cursor
 * line that no longer fit into it (blank lines below the cursor go first)
 * and growing pulls lines back from it, as xterm and tmux do. Margins are
 * reset. Returns 0 or -EINVAL/-ENOMEM (the screen is then unchanged).
 */
PTY_NODISCARD int pty_screen_resize(struct pty_screen *, int rows, int cols);
void pty_screen_size(const struct pty_screen *, int *rows, int *cols);
/* Copy cell (row, col) of the visible screen; out-of-range gives a blank. */
void pty_screen_cell(const struct pty_screen *, int row, int col,
    struct pty_cell *out);
/*
 * The dirty row range since the last clear: returns false when nothing is
 * dirty, else sets [*first, *last] (inclusive).
 */
bool pty_screen_dirty(const struct pty_screen *, int *first, int *last);
void pty_screen_dirty_clear(struct pty_screen *);
void pty_screen_cursor(const struct pty_screen *, struct pty_cursor *out);
void pty_screen_modes(const struct pty_screen *, struct pty_modes *out);
/* The title (OSC 0/2), NUL-terminated, at most PTY_SCREEN_TITLE_MAX bytes. */
const char *pty_screen_title(const struct pty_screen *);
uint64_t pty_screen_bells(const struct pty_screen *);
/*
 * Scrollback: number of lines held, and line idx (0 = oldest). Lines that
 * leave the top of the primary screen go there when the scroll region
 * starts at the top row (xterm's rule); the alternate screen keeps none.
 */
size_t pty_screen_sb_count(const struct pty_screen *);
/*
 * Copy scrollback line idx into cells (at most maxcols); returns the number
 * of cells in the line (trailing blanks trimmed) or -EINVAL.
 */
int pty_screen_sb_line(const struct pty_screen *, size_t idx,
    struct pty_cell *cells, int maxcols);
/* Bytes the scrollback holds (packed lines and the ring; benchmarks). */
size_t pty_screen_sb_bytes(const struct pty_screen *);
/*
 * Keyboard input encoded the way the program asked (DECCKM, bracketed
 * paste...). The bytes come out through the output callback.
 */
enum pty_key {
	PTY_KEY_NONE,
	PTY_KEY_ENTER,
	PTY_KEY_TAB,
	PTY_KEY_BACKSPACE,
	PTY_KEY_ESCAPE,
	PTY_KEY_UP,
	PTY_KEY_DOWN,
	PTY_KEY_LEFT,
	PTY_KEY_RIGHT,
	PTY_KEY_INS,
	PTY_KEY_DEL,
	PTY_KEY_HOME,
	PTY_KEY_END,
	PTY_KEY_PAGEUP,
	PTY_KEY_PAGEDOWN,
	PTY_KEY_F1, /* F1..F12 follow in order */
	PTY_KEY_F12 = PTY_KEY_F1 + 11,
	PTY_KEY_MAX
};
#define PTY_MOD_SHIFT 0x01u
#define PTY_MOD_ALT 0x02u
#define PTY_MOD_CTRL 0x04u
void pty_screen_key(struct pty_screen *, enum pty_key, unsigned mods);
void pty_screen_unichar(struct pty_screen *, uint32_t cp, unsigned mods);
void pty_screen_paste(struct pty_screen *, const char *buf, size_t len);
/*
 * The text of visible row `row` as UTF-8, trailing blanks trimmed, written
 * NUL-terminated into buf (truncated at a character boundary). Returns the
 * length written.
 */
size_t pty_screen_row_text(const struct pty_screen *, int row, char *buf,
    size_t bufsz);
/*
 * Pack visible row `row` (trailing blanks trimmed) in line.c's format into
 * buf (room for pty_line_packed_max(cols) always suffices): the same
 * bytes as pty_screen_cell on every column then pty_line_pack, without the
 * copies. Returns the length, or 0 when row is out of range or buf is too
 * small.
 */
size_t pty_screen_row_pack(const struct pty_screen *, int row, uint8_t *buf,
    size_t bufsz);

/* ------------------------------------------------------------------ */
/* line.c: packed lines, for the scrollback ring and the wire          */

/* Upper bound of pty_line_pack's output for ncells cells. */
size_t pty_line_packed_max(int ncells);
/*
 * Pack cells[0..ncells) (trailing blank cells trimmed) into buf. Returns
 * the bytes written, or 0 if bufsz is too small.
 */
size_t pty_line_pack(const struct pty_cell *cells, int ncells, uint8_t *buf,
    size_t bufsz);
/*
 * Unpack a packed line from untrusted bytes into at most maxcells cells;
 * the rest of cells[] up to maxcells is filled with blanks. Returns the
 * number of cells the line holds, or PTY_EPROTO; *used gets the bytes read.
 */
PTY_NODISCARD int pty_line_unpack(const uint8_t *buf, size_t len,
    struct pty_cell *cells, int maxcells, size_t *used);
/* ------------------------------------------------------------------ */
/* wbuf.c: a growable buffer for building frames                       */

/* A growable output buffer for building frames. */
struct pty_wbuf {
	uint8_t *buf;
	size_t len, cap;
	bool oom;
};
void pty_wbuf_init(struct pty_wbuf *);
void pty_wbuf_free(struct pty_wbuf *);
void pty_wbuf_reset(struct pty_wbuf *);
void pty_wbuf_put(struct pty_wbuf *, const void *, size_t);
void pty_wbuf_u8(struct pty_wbuf *, uint8_t);
void pty_wbuf_u16(struct pty_wbuf *, uint16_t);
void pty_wbuf_u32(struct pty_wbuf *, uint32_t);
void pty_wbuf_u64(struct pty_wbuf *, uint64_t);

/* ------------------------------------------------------------------ */
/* rd.c: a bounds-checked reader over untrusted bytes                  */

/* Little-endian readers over untrusted payloads: bounds-checked cursor. */
struct pty_rd {
	const uint8_t *p;
	size_t len, off;
	bool bad;
};
void pty_rd_init(struct pty_rd *, const uint8_t *p, size_t len);
uint8_t pty_rd_u8(struct pty_rd *);
uint16_t pty_rd_u16(struct pty_rd *);
uint32_t pty_rd_u32(struct pty_rd *);
uint64_t pty_rd_u64(struct pty_rd *);
const uint8_t *pty_rd_bytes(struct pty_rd *, size_t n);

/* ------------------------------------------------------------------ */
/* wire.c: the holder socket protocol (SPEC 9.5)                        */

/*
 * A frame is a 4-byte little-endian payload length, then a 1-byte type,
 * then the payload. Frames over PTY_WIRE_MAX are a protocol error.
 */
#define PTY_WIRE_VERSION 1
#define PTY_WIRE_MAX (1u << 20)
#define PTY_WIRE_HDR 5

enum pty_wire_type {
	/* client -> holder */
	PTY_W_HELLO = 1,	/* u32 version, u8 flags (PTY_HELLO_*) */
	PTY_W_INPUT,		/* raw bytes to type */
	PTY_W_KEY,		/* u32 key (enum pty_key), u32 mods */
	PTY_W_UNICHAR,		/* u32 codepoint, u32 mods */
	PTY_W_PASTE,		/* bytes (bracketed if the program asked) */
	PTY_W_RESIZE,		/* u16 rows, u16 cols */
	PTY_W_SIGNAL,		/* u8 signal (SIGINT/SIGTERM/SIGKILL/SIGHUP) */
	PTY_W_CANCEL,		/* SPEC 5.5 escalation */
	PTY_W_STATUS,		/* u32 seq */
	PTY_W_SCROLLBACK,	/* u32 from (0 = oldest), u32 count */
	PTY_W_ANSWER,		/* u64 dialog digest, then the option named */
	/* holder -> client */
	PTY_W_STATUS_REPLY = 64, /* u32 seq, then a JSON object */
	PTY_W_META,		/* see struct pty_wire_meta; then title bytes */
	PTY_W_ROWS,		/* u16 first, u16 n, then n packed lines */
	PTY_W_SB_LINES,		/* u32 from, u32 total, u32 n, packed lines */
	PTY_W_EXIT,		/* i32 wait status */
	PTY_W_ERROR,		/* i32 code, then message bytes */
	PTY_W_OK,		/* u32 what (the request type acknowledged) */
};

/*
 * Scrollback lines an SB_LINES frame holds at most. To a LIVE client the
 * answer that reaches the newest line is followed at once by META and
 * the whole screen (ROWS), from the same moment.
 */
#define PTY_SB_CHUNK 2000u

#define PTY_HELLO_LIVE 0x01u   /* send the screen then live updates */
#define PTY_HELLO_CONTROL 0x02u /* the client wants to type/resize */
#define PTY_HELLO_SUMMARY 0x04u /* push STATUS_REPLY (seq 0) on changes,
				   at most every PTY_SUMMARY_MS */
#define PTY_SUMMARY_MS 250

struct pty_wire_meta {
	uint16_t rows, cols;
	uint16_t cur_row, cur_col;
	uint8_t cur_visible, cur_blink, cur_shape;
	uint8_t modes;	/* PTY_WMODE_* bits */
	uint8_t mouse;
	uint8_t state;	/* enum pty_run_state */
	int32_t exit_status;
	uint64_t bells;
	uint64_t sb_count;
	uint16_t title_len;
};
#define PTY_WIRE_META_SIZE 36
#define PTY_WMODE_ALT 0x01u
#define PTY_WMODE_APPCURSOR 0x02u
#define PTY_WMODE_APPKEYPAD 0x04u
#define PTY_WMODE_PASTE 0x08u
#define PTY_WMODE_MOUSESGR 0x10u
#define PTY_WMODE_REVERSE 0x20u
#define PTY_WMODE_FOCUS 0x40u

enum pty_run_state { PTY_RUN_STARTING, PTY_RUN_RUNNING, PTY_RUN_EXITED };

/* Incremental decoder over a byte stream of frames. */
struct pty_wire_dec {
	uint8_t *buf;
	size_t len, cap;
	size_t max;	/* frame cap */
	size_t pending;	/* bytes of the frame handed out last */
};
void pty_wire_dec_init(struct pty_wire_dec *, size_t max);
void pty_wire_dec_free(struct pty_wire_dec *);
/* Append bytes; returns 0 or -ENOMEM / PTY_ETOOBIG. */
PTY_NODISCARD int pty_wire_dec_push(struct pty_wire_dec *, const void *buf,
    size_t len);
/*
 * Take the next complete frame: returns 1 and sets *type, *payload (valid
 * until the next _next or _push call) and *plen; 0 when more bytes are needed;
 * PTY_EPROTO/PTY_ETOOBIG on a bad frame.
 */
PTY_NODISCARD int pty_wire_dec_next(struct pty_wire_dec *, uint8_t *type,
    const uint8_t **payload, size_t *plen);

/* Start a frame of the given type; returns the offset to pass to _end. */
size_t pty_wire_begin(struct pty_wbuf *, uint8_t type);
void pty_wire_end(struct pty_wbuf *, size_t start);

/* Encode/decode a META frame payload. */
void pty_wire_meta_put(struct pty_wbuf *, const struct pty_wire_meta *,
    const char *title);
PTY_NODISCARD int pty_wire_meta_get(const uint8_t *p, size_t len,
    struct pty_wire_meta *, char *title, size_t titlesz);

/*
 * Validate any holder->client or client->holder payload for its type
 * (used by both ends and by the fuzz target). Returns 0 or PTY_EPROTO.
 */
PTY_NODISCARD int pty_wire_check(uint8_t type, const uint8_t *p, size_t len);

/* ------------------------------------------------------------------ */
/* mirror.c: a client-side copy of a holder's screen, built from frames */

struct pty_mirror {
	int rows, cols;
	struct pty_cell *cells;	/* rows * cols */
	struct pty_wire_meta meta;
	char title[PTY_SCREEN_TITLE_MAX + 1];
	uint32_t dirty_first, dirty_last; /* rows changed since last clear */
	bool dirty;
	int32_t exit_status;
	bool exited;
};
void pty_mirror_init(struct pty_mirror *);
void pty_mirror_free(struct pty_mirror *);
/*
 * Apply one holder->client frame (META, ROWS, EXIT); other types are
 * ignored. Returns 0 or PTY_EPROTO (the mirror stays consistent).
 */
PTY_NODISCARD int pty_mirror_apply(struct pty_mirror *, uint8_t type,
    const uint8_t *p, size_t len);
const struct pty_cell *pty_mirror_cell(const struct pty_mirror *, int row,
    int col);

/* ------------------------------------------------------------------ */
/* proc.c: a child process on a fresh PTY                               */

typedef void (*pty_proc_exit_cb)(struct pty_proc *, int64_t wstatus,
    void *ud);
typedef void (*pty_proc_read_cb)(struct pty_proc *, const char *buf,
    size_t len, void *ud);

/* How the child gets its terminal (SPEC 8.3). */
enum pty_ctty {
	PTY_CTTY_TAKE,	/* setsid + TIOCSCTTY: trusted_local */
	PTY_CTTY_NONE,	/* setsid only: a sandbox helper takes it later */
};

struct pty_proc_opts {
	const struct sbx_plan *plan;	/* argv, envp, cwd, pre-exec recipe */
	int rows, cols;
	enum pty_ctty ctty;
	size_t read_budget;	/* bytes per loop tick before backpressure */
	pty_proc_read_cb on_read;
	pty_proc_exit_cb on_exit;
	void *ud;
};

/*
 * Spawn the plan on a fresh PTY under loop. On success the child runs and
 * *out is the handle; an exec failure is reported as PTY_EEXEC with errno
 * text in errbuf, and no child is left behind.
 */
PTY_NODISCARD int pty_proc_spawn(struct pty_proc **out,
    struct uv_loop_s *loop, const struct pty_proc_opts *, char *errbuf,
    size_t errsz);
/* Queue bytes to the child's terminal (bounded; returns -ENOBUFS if full). */
PTY_NODISCARD int pty_proc_write(struct pty_proc *, const void *buf,
    size_t len);
PTY_NODISCARD int pty_proc_resize(struct pty_proc *, int rows, int cols);
pid_t pty_proc_pid(const struct pty_proc *);
int pty_proc_master_fd(const struct pty_proc *);
/* Signal the child's session and its process groups (SPEC 5.5). */
int pty_proc_signal(struct pty_proc *, int sig);
/* Pause/resume reading (backpressure from a slow consumer). */
void pty_proc_read_pause(struct pty_proc *, bool paused);
/* Free the read buffer while no output comes; the next read takes one. */
void pty_proc_trim(struct pty_proc *);
bool pty_proc_exited(const struct pty_proc *);
/* Close handles; cb runs once everything is closed and freed. */
void pty_proc_close(struct pty_proc *, void (*cb)(void *ud), void *ud);

/* ------------------------------------------------------------------ */
/* facts.c: process facts from /proc (SPEC 5.3)                         */

struct pty_facts {
	pid_t fg_pgrp;		/* tcgetpgrp of the master, or -1 */
	bool fg_tty_read;	/* a fg process asleep in a terminal read */
	/*
	 * A fg thread waits on the terminal at all: a read, a poll/select
	 * with fd 0 a tty, or an epoll set holding a tty (event loops such
	 * as node listening to their keyboard). Meaningful only when
	 * fg_wait_known (the threads' syscalls could be read).
	 */
	bool fg_tty_wait;
	bool fg_wait_known;
	uint64_t cpu_ticks;	/* utime+stime of the session's processes */
	int nprocs;		/* processes in the session */
	int nbeyond;		/* of them, outside it (hooks.procs's) */
	char fg_comm[64];	/* comm of the fg pgrp leader */
};

/* ------------------------------------------------------------------ */
/* holder.c: the per-lease holder process (SPEC 2)                      */

/* The running holder, handed to hooks.running (opaque). */
struct pty_holder;

/* What the composition root learns from a holder, through callbacks. */
struct pty_holder_hooks {
	/*
	 * The agent was spawned: h stays valid until hooks.closing (for
	 * pty_holder_egress). Called before started.
	 */
	void (*running)(struct pty_holder *h, void *ud);
	/*
	 * The socket listens, the agent is not spawned yet: take the lease
	 * (the composition root's journal). Nonzero: the agent must not
	 * run; err says why (reported on ready_fd). NULL: nothing to take.
	 */
	int (*claim)(char *err, size_t errsz, void *ud);
	void (*started)(pid_t child, void *ud);
	void (*exited)(int64_t wstatus, bool cancelled, void *ud);
	void (*event)(const char *kind, const char *detail, void *ud);
	/* Extra fields for the status reply (a JSON object text, or NULL). */
	char *(*status_json)(void *ud);
	/* The activity changed (SPEC 5.2): state name, deciding signal. */
	void (*activity)(const char *state, const char *signal,
	    const char *detail, void *ud);
	/*
	 * Cancellation's SIGINT and SIGTERM (SPEC 5.5) to the agent, or NULL
	 * for the PTY's process groups and session. A sandbox sends them
	 * through its cgroup, sparing its own supervisor processes, so the
	 * agent gets to exit gracefully; the final SIGKILL always goes to
	 * everything. Returns the count signalled, or negative to fall back.
	 */
	int (*signal_agent)(int sig, void *ud);
	/*
	 * The operator cancels after the agent has exited while the holder
	 * is held (pty_holder_hold: the composition root's result and checks
	 * still run): stop that work. 0: taken (the client gets ok), else
	 * refused as "the agent has exited". NULL: always refused.
	 */
	int (*cancel_held)(void *ud);
	/*
	 * The holder is about to close every handle on its loop: close the
	 * caller's own handles on it now (uv_close; their callbacks still
	 * run). After this the pty_holder of hooks.running is gone.
	 */
	void (*closing)(void *ud);
	/*
	 * Every process of the agent, those that left its session too (a
	 * trusted_local lease's tracking cgroup): their CPU counts for its
	 * activity (SPEC 5.3). *pids is malloc'd (the holder frees it).
	 * NULL, or negative: the session's tree alone.
	 */
	int (*procs)(pid_t **pids, size_t *n, void *ud);
	void *ud;
};

/* Where a stream filter's output goes (struct pty_holder_filter). */
typedef void (*pty_holder_out_cb)(const char *buf, size_t len, void *ud);

/*
 * A stream filter over the agent's output, injected by the composition
 * root (the credential scrubber, SPEC 8.5): the screen model and the
 * transcript see only what it passes to out. feed may hold bytes back
 * (what could begin a match): held says how many, flush lets them go; the
 * holder flushes when no more output came for a while, and at the agent's
 * exit. Called on the holder's loop only; ud is borrowed for the run.
 */
struct pty_holder_filter {
	void (*feed)(const char *buf, size_t len, pty_holder_out_cb out,
	    void *out_ud, void *ud);
	void (*flush)(pty_holder_out_cb out, void *out_ud, void *ud);
	size_t (*held)(void *ud);
	void *ud;
};

struct pty_holder_opts {
	const char *id;		/* lease ID */
	const char *dir;	/* lease directory (0700) */
	const struct sbx_plan *plan;
	enum pty_ctty ctty;
	int rows, cols;
	size_t sb_lines;
	size_t transcript_max;	/* bytes; 0 disables the transcript */
	bool allow_control;	/* false: refuse input/signals/cancel */
	bool trusted_local;
	int ready_fd;		/* "ok PID\n" or "err MSG\n" then closed; -1 */
	int owner_fd;		/* connected socket of the owner (wrap); -1 */
	unsigned cancel_wait_ms; /* each escalation step (SPEC 5.5) */
	const struct pty_rules *rules; /* agent screen rules, or NULL */
	const char *agent;	/* --agent NAME: skip identification */
	/* A filter over the agent's output, or none (.feed NULL). */
	struct pty_holder_filter filter;
	struct pty_holder_hooks hooks;
};

/*
 * Run a holder to its end on loop: spawn, serve the socket dir/holder.sock,
 * keep the screen and transcript. Returns the child's exit code for the
 * holder process's own exit, or a negative error before the child started.
 */
int pty_holder_run(struct uv_loop_s *loop, const struct pty_holder_opts *);
/*
 * The lease's egress proxy has inflight model requests in flight now: the
 * detector's EGRESS signal (SPEC 5.3). Between hooks.running and
 * hooks.closing only.
 */
void pty_holder_egress(struct pty_holder *, unsigned inflight);
/*
 * The question the endpoint asks while blocked on a choice (SPEC 5.4), as
 * the status's "question" object in compact ASCII JSON (malloc'd, the
 * caller frees), or NULL when it asks none. For hooks.activity.
 */
char *pty_holder_question(struct pty_holder *);
/*
 * The lease's model gateway holds its model requests for reason (a spend
 * cap, an unknown cost), or no longer (NULL): the detector's
 * gateway:REASON signal, blocked (SPEC 5.3, 8.5). Same window.
 */
void pty_holder_gateway_held(struct pty_holder *, const char *reason);
/*
 * The lease's model gateway answered its last model request, and none is
 * in flight: how the model's turn ended (its stop reason, e.g. end_turn
 * or tool_use): the detector's model:STOP signal (SPEC 5.3, 8.5).
 * Same window.
 */
void pty_holder_gateway_stop(struct pty_holder *, const char *stop);
/*
 * Once the agent has exited, keep serving status with phase (e.g.
 * "finishing") until pty_holder_finished: the composition root's result
 * and teardown run while clients still see a live holder. Call from
 * hooks.exited; pty_holder_finished (on the loop's thread) lets the
 * holder stop.
 */
void pty_holder_hold(struct pty_holder *, const char *phase);
void pty_holder_finished(struct pty_holder *);

/* ------------------------------------------------------------------ */
/* holder_client.c: blocking client of a holder socket (one-shot commands) */

/*
 * Connect to the holder socket at path with a deadline; sends HELLO.
 * Returns 0 or a negative error (PTY_ETIMEDOUT, -ECONNREFUSED...).
 */
PTY_NODISCARD int pty_holder_client_open(struct pty_holder_client **out,
    const char *path, unsigned flags, int timeout_ms);
void pty_holder_client_free(struct pty_holder_client *);
int pty_holder_client_fd(const struct pty_holder_client *);
/* Send one frame (blocking with the client's deadline). */
PTY_NODISCARD int pty_holder_client_send(struct pty_holder_client *,
    uint8_t type, const void *payload, size_t len);
/*
 * Receive the next frame within timeout_ms: 1 and the frame, 0 on timeout,
 * negative on error/EOF. The payload is valid until the next call.
 */
PTY_NODISCARD int pty_holder_client_recv(struct pty_holder_client *,
    uint8_t *type, const uint8_t **payload, size_t *plen, int timeout_ms);
/*
 * Status ping: the JSON text of the holder's status (malloc'd, caller
 * frees) within timeout_ms, or NULL with *err set.
 */
char *pty_holder_client_status(struct pty_holder_client *, int timeout_ms,
    int *err);

/* ------------------------------------------------------------------ */
/* detect.c: the pure lifecycle detector of one endpoint (SPEC 5.2-5.4) */

struct pty_detect;
struct pty_rules;
struct pty_rules_agent;

/* Activity states (SPEC 5.2); their names are the lower-case words. */
enum pty_detect_state {
	PTY_DETECT_STARTING,
	PTY_DETECT_WORKING,
	PTY_DETECT_PROMPT,
	PTY_DETECT_BLOCKED,
	PTY_DETECT_DONE,
	PTY_DETECT_FAILED,
	PTY_DETECT_CANCELLED,
};
#define PTY_DETECT_NSTATES 7
const char *pty_detect_state_name(enum pty_detect_state);
/* Parse a state name ("working"...); returns 0 or -EINVAL. */
PTY_NODISCARD int pty_detect_state_parse(const char *name,
    enum pty_detect_state *out);

/*
 * The report a hook prints on its own terminal (`corral report STATE`,
 * SPEC 5.3): ESC ] 7717 ; corral-report ; STATE BEL (ESC \ also ends it),
 * STATE one of working, prompt, blocked, done, failed. A report is one
 * signal among others: output after it ends it (docs/detection.md).
 */
#define PTY_DETECT_REPORT_OSC 7717
#define PTY_DETECT_REPORT_TAG "corral-report"
/*
 * Write the report sequence for the state name into buf (NUL-terminated);
 * returns its length, or -EINVAL for a name a report cannot carry.
 */
int pty_detect_report_seq(const char *state, char *buf, size_t bufsz);

/* "No wakeup needed": the state is settled until the next event. */
#define PTY_DETECT_NEVER UINT64_MAX

enum pty_detect_ev {
	PTY_DETECT_EV_OUTPUT,	/* .bytes of program output were read */
	PTY_DETECT_EV_INPUT,	/* the operator typed .bytes (echo follows) */
	PTY_DETECT_EV_RESIZE,	/* the terminal was resized (a redraw next) */
	PTY_DETECT_EV_CANCEL,	/* the operator cancelled (SPEC 5.5) */
	PTY_DETECT_EV_EXIT,	/* ended: exit .status, or .signo > 0 */
	PTY_DETECT_EV_BELL,	/* BEL */
	PTY_DETECT_EV_OSC,	/* OSC text "NUM;payload" (PTY_SEV_OSC) */
	PTY_DETECT_EV_EGRESS,	/* .inflight model requests now in flight */
	PTY_DETECT_EV_HELD,	/* the model gateway holds the lease's model
				 * requests for .text (NUL-terminated: a
				 * reason), or no longer (.text NULL) */
	PTY_DETECT_EV_STOP,	/* the model's last turn, none in flight now,
				 * ended for .text (NUL-terminated: its stop
				 * reason, e.g. end_turn, tool_use) */
};

struct pty_detect_event {
	enum pty_detect_ev kind;
	uint64_t now_ms;	/* monotonic milliseconds */
	size_t bytes;		/* OUTPUT, INPUT */
	int status;		/* EXIT */
	int signo;		/* EXIT: > 0 when killed by this signal */
	unsigned inflight;	/* EGRESS */
	const char *text;	/* OSC: not NUL-terminated, len bytes */
	size_t len;
};

/* Timings in ms; a zero field takes its default (docs/detection.md). */
struct pty_detect_opts {
	uint32_t quiet_ms;	/* no output this long is quiet (250) */
	uint32_t rule_quiet_ms;	/* quiet enough for a prompt rule (150) */
	uint32_t work_ms;	/* a burst this long leaves a rest (300) */
	uint32_t echo_ms;	/* output this soon after input: echo (250) */
	uint32_t resize_ms;	/* output this soon after resize (500) */
	uint32_t idle_ms;	/* quiet + idle CPU this long: prompt (1000) */
	uint32_t blind_ms;	/* quiet, no facts at all: prompt (3000) */
	uint32_t grace_ms;	/* output this soon after a report (300) */
	uint32_t facts_min_ms;	/* first sampling interval (250) */
	uint32_t facts_max_ms;	/* interval backs off to this (2000) */
	uint32_t progress_ms;	/* OSC 9;4 with no output expires (30000) */
	uint32_t flags;		/* PTY_DETECT_F_* */
};
/*
 * The caller samples facts whenever a step sets want_facts (a holder):
 * then no resting state is decided from stale facts, e.g. a shell's
 * prompt rule while a command runs in the foreground.
 */
#define PTY_DETECT_F_FACTS 0x1u

#define PTY_DETECT_SIGNAL_MAX 64
#define PTY_DETECT_DETAIL_MAX 160

struct pty_detect_result {
	enum pty_detect_state state;
	enum pty_detect_state prev;	/* what the previous step returned */
	bool changed;			/* state != prev */
	bool final;			/* done/failed/cancelled: for good */
	uint64_t since_ms;		/* when state was entered */
	uint64_t next_ms;		/* step again then, or ..._NEVER */
	bool want_facts;		/* sample facts, pass them, step */
	/* What decided state: "rule:claude-code:permission", "fact:tty-read",
	 * "osc133:A", "exit:0", "report:blocked", "quiet", "output"... */
	char signal[PTY_DETECT_SIGNAL_MAX];
	/* Evidence for explain, e.g. the matched row (C0 controls as '?'). */
	char detail[PTY_DETECT_DETAIL_MAX];
};

/*
 * Create a detector in state starting at now_ms; opts NULL takes every
 * default. Pure: no I/O, no timers, time comes in through now_ms. Returns
 * 0 or -ENOMEM.
 */
PTY_NODISCARD int pty_detect_new(struct pty_detect **out,
    const struct pty_detect_opts *opts, uint64_t now_ms);
void pty_detect_free(struct pty_detect *);
/*
 * Use this agent's screen rules (NULL: agent-agnostic signals only). The
 * agent is borrowed: its pty_rules set must outlive the detector or be
 * replaced here first.
 */
void pty_detect_set_agent(struct pty_detect *,
    const struct pty_rules_agent *);
const struct pty_rules_agent *pty_detect_agent(const struct pty_detect *);
/* Record one event (copied; text is borrowed for the call only). */
void pty_detect_feed_event(struct pty_detect *,
    const struct pty_detect_event *);
/*
 * The visible rows, top to bottom, as text, and the title (NULL: none).
 * Trailing blank rows are ignored, so "bottom N" means the N last rows that
 * hold text; rows and title are copied with caps (PTY_RULES_ROWS_MAX rows,
 * PTY_DETECT_ROW_MAX bytes each, PTY_SCREEN_TITLE_MAX). Call it when the
 * screen changed, at least before each step that follows output.
 */
#define PTY_DETECT_ROW_MAX 1024
void pty_detect_set_screen(struct pty_detect *, const char *const *rows,
    int nrows, const char *title, uint64_t now_ms);
/* Process facts sampled at now_ms (facts.c); cpu_ticks is cumulative. */
void pty_detect_set_facts(struct pty_detect *, const struct pty_facts *,
    uint64_t now_ms);
/*
 * Decide the state at now_ms (>= every time fed so far). Arm one timer for
 * out->next_ms (none when PTY_DETECT_NEVER: an idle, settled endpoint costs
 * nothing); when out->want_facts, sample facts, pass them, step again.
 */
void pty_detect_step(struct pty_detect *, uint64_t now_ms,
    struct pty_detect_result *out);
/*
 * Human-readable evidence for `corral explain` (several lines: state,
 * deciding signal, agent, output, facts, marks, report), NUL-terminated
 * into buf; returns the length it needed.
 */
size_t pty_detect_explain(const struct pty_detect *, uint64_t now_ms,
    char *buf, size_t bufsz);
/* Bytes the detector holds (for the bounded-memory tests and bench). */
size_t pty_detect_memory(const struct pty_detect *);
/*
 * The choice dialog on the screen as last set (dialog.c), or NULL: the
 * question a blocked lease asks, whatever decided blocked.
 */
const struct pty_dialog *pty_detect_dialog(const struct pty_detect *);

/* ------------------------------------------------------------------ */
/* dialog.c: choice dialogs on a screen, for any agent (SPEC 5.3, 5.4)  */

#define PTY_DIALOG_ROWS 32		/* bottom rows looked at */
#define PTY_DIALOG_OPTIONS_MAX 32	/* options kept */
#define PTY_DIALOG_KEYS_MAX 8		/* bytes that select one option */
#define PTY_DIALOG_LABEL_MAX 160
#define PTY_DIALOG_QUESTION_MAX 512

enum pty_dialog_kind {
	PTY_DIALOG_NONE,
	PTY_DIALOG_OPTIONS,	/* a numbered or lettered list */
	PTY_DIALOG_YESNO,	/* "[Y/n]" on the last row */
};

struct pty_dialog_option {
	char name[4];		/* as drawn: "1", "a"; "y" or "n" */
	char keys[PTY_DIALOG_KEYS_MAX];	/* its own shortcut: "y", ESC */
	size_t nkeys;		/* 0: none */
	char label[PTY_DIALOG_LABEL_MAX];	/* its text, continuation rows */
};

struct pty_dialog {
	enum pty_dialog_kind kind;
	char question[PTY_DIALOG_QUESTION_MAX];	/* rows joined by '\n' */
	int noptions;		/* kept, at most PTY_DIALOG_OPTIONS_MAX */
	int nseen;		/* on the screen */
	struct pty_dialog_option options[PTY_DIALOG_OPTIONS_MAX];
	int def;		/* the marked option (Enter takes it), or -1 */
	uint64_t digest;	/* of the question, options and selection */
	char evidence[96];	/* why it is a dialog, for explain */
};

/*
 * Read the dialog in the last PTY_DIALOG_ROWS rows of text (rows joined by
 * '\n', as the detector keeps them: Unicode spaces already ASCII). Returns
 * true and fills out when they hold one. Every field is bounded; bytes are
 * copied as they are (the caller escapes them for display).
 */
bool pty_dialog_parse(const char *text, struct pty_dialog *out);
/*
 * The option WHAT names: its name ("2", "y"), its one-key shortcut, its
 * place in the list (1..), its label, or a unique start of its label
 * (case-insensitive). Returns its index, -1 for none, -2 when the start
 * fits several.
 */
#define PTY_DIALOG_ANSWER_MAX 256	/* bytes of WHAT on the wire */
int pty_dialog_option_find(const struct pty_dialog *, const char *what);
/*
 * The keys that pick option i, into buf (at least PTY_DIALOG_ANSWER_KEYS
 * bytes): its own shortcut; else, with an option marked, arrows from it
 * to i and Enter; else its name (its number or letter). Returns the
 * length, 0 for no such option. Nothing of the screen but the shortcut's
 * one key (a-z, 0-9, Esc) ever goes into them.
 */
#define PTY_DIALOG_ANSWER_KEYS (3 * PTY_DIALOG_OPTIONS_MAX + 1)
size_t pty_dialog_keys(const struct pty_dialog *, int i, char *buf,
    size_t bufsz);
/* The digest as 16 hex digits and a NUL. */
void pty_dialog_digest_hex(const struct pty_dialog *, char buf[17]);

/* ------------------------------------------------------------------ */
/* rules.c: per-agent screen rules kept as data files (SPEC 5.3)        */

#define PTY_RULES_MAX 64	/* rules per agent */
#define PTY_RULES_ROWS_MAX 64	/* the largest "bottom N" region */

enum pty_rules_region {
	PTY_RULES_BOTTOM,	/* the last N rows that hold text */
	PTY_RULES_TITLE,	/* the title (OSC 0/2) */
	PTY_RULES_NOTIFY,	/* the last OSC 9/777 notification, in force */
};

struct pty_rule_info {
	const char *name;
	enum pty_detect_state state;	/* working, prompt or blocked */
	enum pty_rules_region region;
	int rows;			/* PTY_RULES_BOTTOM: N */
	int priority;
	uint32_t hold_ms;		/* region unchanged this long first */
};

/* A problem in a rule file: file path, 1-based line (0: whole file). */
typedef void (*pty_rules_error_cb)(const char *file, int line,
    const char *msg, void *ud);

PTY_NODISCARD int pty_rules_new(struct pty_rules **out);
void pty_rules_free(struct pty_rules *);
/*
 * Load every NAME.rules file of each directory, in order; a file in a
 * later directory replaces the same-named file of an earlier one (so pass
 * the shipped share/corral/agents first, the operator's
 * $XDG_CONFIG_HOME/corral/agents last). A malformed file is reported
 * through err (file, line, message) and skipped whole, leaving any earlier
 * same-named file in force; the others keep working. Missing directories
 * are skipped. Returns the number of files rejected, or -ENOMEM.
 */
int pty_rules_load_dirs(struct pty_rules *, const char *const *dirs,
    size_t ndirs, pty_rules_error_cb err, void *ud);
/*
 * Parse one agent's rules from text as if read from file (for messages);
 * the agent's name is name, replacing a loaded one of that name. Returns 0,
 * -EINVAL (reported through err) or -ENOMEM.
 */
PTY_NODISCARD int pty_rules_load_text(struct pty_rules *, const char *name,
    const char *file, const char *text, size_t len, pty_rules_error_cb err,
    void *ud);
/* The operator's rule directory: $XDG_CONFIG_HOME/corral/agents, else
 * $HOME/.config/corral/agents. Returns 0, or -ENOENT / -ENAMETOOLONG. */
int pty_rules_user_dir(char *buf, size_t bufsz);
size_t pty_rules_count(const struct pty_rules *);
const struct pty_rules_agent *pty_rules_at(const struct pty_rules *,
    size_t i);
/* By its name, else by one of its commands spelled out (an alias:
 * "claude" finds claude-code). NULL when none. */
const struct pty_rules_agent *pty_rules_find(const struct pty_rules *,
    const char *name);
/*
 * The agent of a foreground process, from its argv: an agent's argv
 * pattern against the whole command line first, then its command globs
 * against each program name behind launchers (env, node, bun, deno,
 * python, sh -c...), innermost first. NULL when none matches.
 */
const struct pty_rules_agent *pty_rules_identify(const struct pty_rules *,
    const char *const *argv, int argc);
/*
 * The program names behind launchers, outermost first ("node /x/claude"
 * gives "node", "claude"): each NUL-terminated, PTY_RULES_NAME_MAX bytes
 * at most, into names[max]. Returns how many.
 */
#define PTY_RULES_NAME_MAX 64
int pty_rules_unwrap(const char *const *argv, int argc,
    char (*names)[PTY_RULES_NAME_MAX], int max);
const char *pty_rules_agent_name(const struct pty_rules_agent *);
const char *pty_rules_agent_file(const struct pty_rules_agent *);
/*
 * The model endpoints ("host:port") the agent needs, from `endpoints =` in
 * its [agent] section, NULL-terminated; NULL when it names none.
 */
const char *const *pty_rules_agent_endpoints(const struct pty_rules_agent *);
int pty_rules_agent_nrules(const struct pty_rules_agent *);
void pty_rules_agent_rule(const struct pty_rules_agent *, int i,
    struct pty_rule_info *out);
/*
 * Whether rule i matches text (its region: rows joined by '\n'). When it
 * does and line is not NULL, *line and *linelen give the line its first
 * pattern matched in.
 */
bool pty_rules_agent_test(const struct pty_rules_agent *, int i,
    const char *text, const char **line, size_t *linelen);

#endif /* CORRAL_PTY_H */
