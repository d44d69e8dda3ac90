/*
 * pty_int.h: declarations shared between pty/ files but not exported
 * (STYLE A): the packed-line encoding primitives that screen.c uses to pack
 * its own cells straight into scrollback without a struct pty_cell detour.
 */
#ifndef CORRAL_PTY_INT_H
#define CORRAL_PTY_INT_H

#include "pty/pty.h"

/* Longest packed line, in cells (the codec refuses more). */
#define PTY__LINE_MAXCELLS 4096
/* Longest UTF-8 text of one cell: PTY_CELL_MAXCP codepoints of 4 bytes. */
#define PTY__CELL_TEXTMAX (4 * PTY_CELL_MAXCP)
/* Cell text bytes (see line.c for the whole format). */
#define PTY__LC_BLANK 0x00u	/* empty cell */
#define PTY__LC_WIDE2 0x80u	/* right half of a wide character */
#define PTY__LC_TEXT 0x80u	/* 0x80 + n: n (1..24) UTF-8 bytes follow */
/* Run header: u16 count, u32 fg, u32 bg, u16 attrs. */
#define PTY__LINE_RUNHDR 12
#define PTY__ATTR_ALL 0x00ffu

/* UTF-8 of cp (U+FFFD for surrogates/out of range) at p; returns 1..4. */
int pty__utf8_put(uint8_t *p, uint32_t cp);
/* Write a u16 / u32 little-endian at p. */
void pty__put16(uint8_t *p, uint16_t v);
void pty__put32(uint8_t *p, uint32_t v);
/*
 * Start a run at p (count patched later with pty__put16 on p); returns the
 * position after the run header.
 */
uint8_t *pty__line_run(uint8_t *p, uint32_t fg, uint32_t bg, uint16_t attrs);
/*
 * Encode one cell's text (cps[0..n), n >= 1, cps[0] != 0) at p; returns
 * the position after it. At most 1 + PTY__CELL_TEXTMAX bytes.
 */
uint8_t *pty__line_text(uint8_t *p, const uint32_t *cps, int n);

#endif /* CORRAL_PTY_INT_H */
