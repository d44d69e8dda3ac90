/*
 * pty_holder_int.h: private declarations shared between holder.c and the
 * files that produce or read holder frames (the final-screen file).
 */
#ifndef CORRAL_PTY_HOLDER_INT_H
#define CORRAL_PTY_HOLDER_INT_H

#include "pty/pty.h"

void pty__holder_meta(struct pty_screen *, enum pty_run_state, int32_t,
    struct pty_wire_meta *);
void pty__holder_frame(struct pty_wbuf *, struct pty_screen *,
    enum pty_run_state, int32_t, int first, int last);
void pty__holder_sb(struct pty_wbuf *, struct pty_screen *, uint32_t from,
    uint32_t count);

#endif
