/*
 * pty_holder_int.h: private declarations shared by the holder's files
 * (holder.c, holder_server.c, holder_frames.c, holder_detect.c): the
 * holder's state, then one block per file.
 */
#ifndef CORRAL_PTY_HOLDER_INT_H
#define CORRAL_PTY_HOLDER_INT_H

#include <uv.h>

#include <jansson.h>

#include "pty/pty.h"

#define HOLDER_READ_BUDGET (256u * 1024u)
#define HOLDER_CLIENT_QUEUE (512u * 1024u)
#define HOLDER_FRAME_MIN_MS 8
#define HOLDER_LINGER_MS 1000
#define HOLDER_MAX_CLIENTS 64
#define HOLDER_TRICKLE 1024	/* bytes a pass below which reads rest */
#define HOLDER_TRICKLE_MS 5
#define HOLDER_FILTER_MS 250
#define HOLDER_TRANSCRIPT_BUF (32u * 1024u)	/* a batch of output */
#define HOLDER_TRANSCRIPT_MS 100	/* written at most this late */
#define HOLDER_IDLE_MS 1000	/* quiet this long: give back (holder.c) */

struct hclient {
	uv_pipe_t pipe;
	struct holder *h;
	struct pty_wire_dec dec;
	struct hclient *next;
	bool live, owner, closing, full, summary;
	uid_t uid;		/* the peer (SO_PEERCRED) */
	pid_t pid;
	int dfirst, dlast; /* pending dirty rows; dfirst < 0: none */
	size_t queued;
};

struct holder;

/* The public handle of a running holder (pty_holder_egress...). */
struct pty_holder {
	struct holder *h;
};

struct holder {
	struct pty_holder self;
	uv_loop_t *loop;
	const struct pty_holder_opts *o;
	struct pty_screen *screen;
	struct pty_proc *proc;
	uv_pipe_t server;
	uv_check_t flush_check;
	uv_timer_t flush_timer;
	uv_timer_t cancel_timer;
	uv_timer_t linger_timer;
	uv_timer_t summary_timer;
	uv_signal_t sigterm;
	struct hclient *clients;
	int nclients;
	int transcript_fd;
	uint64_t transcript_bytes;	/* written */
	bool transcript_truncated;
	char *tbuf;			/* the batch not yet written, or NULL */
	size_t tlen;
	uv_timer_t transcript_timer;
	/* output rested HOLDER_IDLE_MS: buffers freed, heap trimmed */
	uv_timer_t idle_timer;
	uint64_t out_ms;		/* the loop's time of the last output */
	enum pty_run_state state;
	int64_t wstatus;
	bool cancelled;
	int cancel_step;
	bool frame_urgent;
	uint64_t last_frame_ms;
	uint64_t started_ms;
	pid_t child;
	int exit_code;
	bool stopping;
	struct pty_wbuf wb;
	/* trickle coalescing (holder.c) */
	uv_check_t coalesce_check;
	uv_timer_t coalesce_timer;
	size_t wake_bytes;
	/* lifecycle detection (holder_detect.c) */
	struct pty_detect *det;
	uv_timer_t det_timer;
	/* `corral answer`: its keys, typed one key at a time */
	uv_timer_t ans_timer;
	char ans_keys[PTY_DIALOG_ANSWER_KEYS];
	size_t ans_len, ans_off;
	bool det_screen_dirty;
	uint64_t det_dirty_ms;	/* when the screen last changed */
	uint64_t det_last_ms;
	pid_t det_fg;		/* fg pgrp the agent was identified from */
	char **det_rows;	/* row text buffers, det_nrows of them */
	int det_nrows;
	struct pty_detect_result det_res;
	/* the filter over the agent's output (opts.filter), or NULL; what
	 * it holds back (a possible start of a match) goes out after
	 * HOLDER_FILTER_MS without more output */
	const struct pty_holder_filter *filter;
	uv_timer_t filter_timer;
	/* hold after the exit (pty_holder_hold): serving, phase shown */
	bool held;
	bool closed_hook;
	char phase[32];
};

/* holder_server.c: the socket server and its clients (conn: one client) */
void pty__holder_server_conn_close(struct hclient *);
int pty__holder_server_conn_send(struct hclient *,
    const struct pty_wbuf *);
void pty__holder_server_conn_closed(uv_handle_t *);
struct hclient *pty__holder_server_conn_new(struct holder *);
void pty__holder_server_conn_attach(struct holder *, struct hclient *);
void pty__holder_server_on_connect(uv_stream_t *, int);
void pty__holder_server_conn_flush(struct holder *, struct hclient *);
void pty__holder_server_collect_dirty(struct holder *);
void pty__holder_server_schedule_flush(struct holder *, bool urgent);
void pty__holder_server_status(struct hclient *, uint32_t seq, bool facts);
void pty__holder_server_summary_cb(uv_timer_t *);
void pty__holder_server_summary_changed(struct holder *);

/* holder.c */
void pty__holder_cancel_step(struct holder *);
void pty__holder_maybe_stop(struct holder *);
uint64_t pty__holder_now_ms(void);
void pty__holder_event(struct holder *, const char *kind, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));

/* holder_frames.c: the frames a holder sends, and the final screen */
void pty__holder_frames_meta(struct pty_screen *, enum pty_run_state, int32_t,
    struct pty_wire_meta *);
void pty__holder_frames_screen(struct pty_wbuf *, struct pty_screen *,
    enum pty_run_state, int32_t, int first, int last);
void pty__holder_frames_sb(struct pty_wbuf *, struct pty_screen *,
    uint32_t from, uint32_t count);
void pty__holder_frames_write_final(struct holder *);

/* holder_detect.c: the lifecycle detector wired to the holder (SPEC 5.3) */
int pty__holder_detect_init(struct holder *);
/* The agent's process facts: its session's tree and hooks.procs. */
int pty__holder_facts(struct holder *, struct pty_facts *out);
void pty__holder_detect_free(struct holder *);
/* The row text buffers go until the next step that reads the screen. */
void pty__holder_detect_trim(struct holder *);
void pty__holder_detect_event(struct holder *,
    const struct pty_detect_event *);
void pty__holder_detect_output(struct holder *, size_t bytes);
void pty__holder_detect_screen_event(struct holder *,
    enum pty_screen_event_kind, const char *text, size_t len);
void pty__holder_detect_exit(struct holder *, int64_t wstatus);
void pty__holder_detect_status(struct holder *, json_t *);
int pty__holder_detect_answer(struct holder *, const struct hclient *,
    uint64_t digest, const char *what, size_t len, char *why,
    size_t whysz);

#endif
