/*
 * corral_holder.c: the corral-holder executable, a lease's holder process
 * (SPEC 2; runtime/holder_main.c). Its own small program, exec'd by
 * spawn.c next to corral: it carries only the holder's room (runtime, pty,
 * lease, sbx) and is linked so that every live holder shares its pages
 * (tui/CMakeLists.txt), instead of each paying for the whole console.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

#include <openssl/crypto.h>

#include "lease/lease.h"
#include "tui/runtime/runtime.h"

int main(int, char **);

int
main(int argc, char **argv)
{
	/*
	 * The malloc tunables spawn.c set for this process alone (runtime.h)
	 * are read; nothing the holder starts inherits them.
	 */
	if (getenv(TUI_HOLDER_TUNED_ENV) != NULL) {
		unsetenv("GLIBC_TUNABLES");
		unsetenv(TUI_HOLDER_TUNED_ENV);
	}
	/*
	 * One malloc arena for the loop and the journal's worker thread: a
	 * second arena would keep its own free pages in every holder.
	 */
	mallopt(M_ARENA_MAX, 1);
	/*
	 * libcrypto makes the receipts' digests: no error strings, no name
	 * tables of every cipher and digest (~90 kB a holder).
	 */
	OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS |
	    OPENSSL_INIT_NO_ADD_ALL_CIPHERS | OPENSSL_INIT_NO_ADD_ALL_DIGESTS,
	    NULL);
	/* Its journal handles' caches grow only as they are used. */
	if (lease_store_config_lean() < 0)
		fprintf(stderr, "corral-holder: journal: default page cache\n");
	return tui_holder_main_run(argc, argv);
}
