/*
 * fuzz_wire.c: libFuzzer target over the holder socket decoder: arbitrary
 * bytes pushed through the frame decoder in pieces, every frame validated
 * and applied to a client-side mirror, as a console would (SPEC 9.5).
 */
#include <stddef.h>
#include <stdint.h>

#include "pty/pty.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pty_wire_dec dec;
	struct pty_mirror m;
	const uint8_t *p;
	size_t plen, off = 0, step;
	uint8_t type;
	int rc;

	pty_wire_dec_init(&dec, 1u << 16);
	pty_mirror_init(&m);
	while (off < size) {
		step = 1 + (size_t)data[off] % 97;
		if (step > size - off)
			step = size - off;
		if (pty_wire_dec_push(&dec, data + off, step) < 0)
			break;
		off += step;
		while ((rc = pty_wire_dec_next(&dec, &type, &p, &plen)) == 1) {
			if (pty_wire_check(type, p, plen) == 0 &&
			    pty_mirror_apply(&m, type, p, plen) == 0 &&
			    m.rows > 0)
				(void)pty_mirror_cell(&m, m.rows - 1,
				    m.cols - 1);
		}
		if (rc < 0)
			break;
	}
	pty_mirror_free(&m);
	pty_wire_dec_free(&dec);
	return 0;
}
