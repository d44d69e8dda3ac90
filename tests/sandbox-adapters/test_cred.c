/*
 * test_cred.c: minted credentials (SPEC 8.5; issue 7). The scrubber
 * against a naive replacement over every chunking; mint and revoke with
 * hook scripts that record what they were given (the value never on an
 * argv, revoke gets it on stdin, failures keep the file for a retry); the
 * plan binding; and a host-side canary scan around a real bwrap agent zone
 * holding a minted canary: every /proc/<pid>/cmdline and environ outside
 * the zone, and the lease directory, hold none.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_egress.h"
#include "sandbox-adapters/sbx_int.h"
#include "support/check_util.h"

Suite *cred_suite(void);

/* ------------------------------------------------------------------ */
/* The scrubber.                                                       */

/* What a scrubber must produce: left-to-right, non-overlapping. */
static char *
naive(const char *in, size_t len, const char *secret, size_t *outlen)
{
	size_t sl = strlen(secret), o = 0;
	char *out = malloc(len * 10 + 1);

	ck_assert_ptr_nonnull(out);
	for (size_t i = 0; i < len;) {
		if (i + sl <= len && memcmp(in + i, secret, sl) == 0) {
			memcpy(out + o, "[REDACTED]", 10);
			o += 10;
			i += sl;
		} else {
			out[o++] = in[i++];
		}
	}
	out[o] = '\0';
	*outlen = o;
	return out;
}

struct acc {
	char buf[8192];
	size_t len;
};

static void
acc_out(const char *buf, size_t len, void *ud)
{
	struct acc *a = ud;

	ck_assert_uint_le(a->len + len, sizeof a->buf);
	memcpy(a->buf + a->len, buf, len);
	a->len += len;
}

struct scrub_case {
	const char *secret;
	const char *in;
};

static const struct scrub_case scrub_cases[] = {
	{ "sk-canary-42", "key=sk-canary-42 and again sk-canary-42." },
	{ "sk-canary-42", "sk-canary-4sk-canary-42sk-canary-4" },
	{ "aab", "aaab aab aaaab" },
	{ "abab", "ababababab" },
	{ "aaaa", "aaaaaaaaa" },
	{ "abcabd", "abcabcabdabcab" },
	{ "x", "xxyxx" },
	{ "needle", "no match here at all" },
	{ "tok", "" },
};

START_TEST(test_cred_scrub_matches_naive)
{
	const struct scrub_case *c = &scrub_cases[_i];
	size_t len = strlen(c->in), wantlen, gotlen;
	char *want = naive(c->in, len, c->secret, &wantlen);
	char *got = sbx_scrub_copy(c->in, len, c->secret, &gotlen);

	ck_assert_ptr_nonnull(got);
	ck_assert_uint_eq(gotlen, wantlen);
	ck_assert_str_eq(got, want);
	ck_assert_ptr_null(strstr(got, c->secret));
	/* Every split into two chunks, and byte by byte. */
	for (size_t cut = 0; cut <= len; cut++) {
		struct sbx_scrub *s = sbx_scrub_new(c->secret);
		struct acc a = { .len = 0 };

		ck_assert_ptr_nonnull(s);
		sbx_scrub_feed(s, c->in, cut, acc_out, &a);
		ck_assert_uint_lt(sbx_scrub_held(s), strlen(c->secret));
		sbx_scrub_feed(s, c->in + cut, len - cut, acc_out, &a);
		sbx_scrub_flush(s, acc_out, &a);
		ck_assert_uint_eq(sbx_scrub_held(s), 0);
		ck_assert_uint_eq(a.len, wantlen);
		ck_assert_mem_eq(a.buf, want, wantlen);
		sbx_scrub_free(s);
	}
	{
		struct sbx_scrub *s = sbx_scrub_new(c->secret);
		struct acc a = { .len = 0 };

		for (size_t i = 0; i < len; i++)
			sbx_scrub_feed(s, c->in + i, 1, acc_out, &a);
		sbx_scrub_flush(s, acc_out, &a);
		ck_assert_uint_eq(a.len, wantlen);
		ck_assert_mem_eq(a.buf, want, wantlen);
		sbx_scrub_free(s);
	}
	free(want);
	free(got);
}
END_TEST

/* Random bytes with planted secrets, random chunk sizes. */
START_TEST(test_cred_scrub_random)
{
	static const char secret[] = "sk-ant-api03-Zz9";
	char in[6000];
	size_t len = sizeof in, wantlen, off = 0;
	unsigned seed = 12345u + (unsigned)_i;
	struct sbx_scrub *s = sbx_scrub_new(secret);
	struct acc *a = calloc(1, sizeof *a);
	char *want;

	for (size_t i = 0; i < len; i++)
		in[i] = "sk-antapi03Zz9\n\0x"[rand_r(&seed) % 17];
	for (int k = 0; k < 20; k++) {
		size_t at = (size_t)rand_r(&seed) % (len - sizeof secret);

		memcpy(in + at, secret, sizeof secret - 1);
	}
	want = naive(in, len, secret, &wantlen);
	while (off < len) {
		size_t n = 1 + (size_t)rand_r(&seed) % 40;

		if (n > len - off)
			n = len - off;
		sbx_scrub_feed(s, in + off, n, acc_out, a);
		off += n;
	}
	sbx_scrub_flush(s, acc_out, a);
	ck_assert_uint_eq(a->len, wantlen);
	ck_assert_mem_eq(a->buf, want, wantlen);
	ck_assert_uint_ge(sbx_scrub_hits(s), 1);
	ck_assert_ptr_null(memmem(a->buf, a->len, secret, sizeof secret - 1));
	sbx_scrub_free(s);
	free(a);
	free(want);
}
END_TEST

START_TEST(test_cred_scrub_edges)
{
	size_t n;
	char *out;

	ck_assert_ptr_null(sbx_scrub_new(NULL));
	ck_assert_ptr_null(sbx_scrub_new(""));
	/* No secret: a plain copy. */
	out = sbx_scrub_copy("abc", 3, NULL, &n);
	ck_assert_str_eq(out, "abc");
	ck_assert_uint_eq(n, 3);
	free(out);
	out = sbx_scrub_copy("", 0, "s", &n);
	ck_assert_str_eq(out, "");
	ck_assert_uint_eq(n, 0);
	free(out);
	/* NULs in the stream are just bytes. */
	out = sbx_scrub_copy("a\0SECRET\0b", 10, "SECRET", &n);
	ck_assert_uint_eq(n, 14);
	ck_assert_mem_eq(out, "a\0[REDACTED]\0b", 14);
	free(out);
	ck_assert_uint_eq(sbx_scrub_held(NULL), 0);
	sbx_scrub_free(NULL);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Mint and revoke with recording hooks.                               */

struct cfx {
	char *dir;	/* scratch: hooks and what they record */
	char *lease;	/* the lease directory */
	char mint[512], revoke[512];
	char canary[64];
	struct sbx_cred_config cfg;
};

static void
script(const char *path, const char *body)
{
	ck_assert_int_eq(cu_write_file(path, body, strlen(body)), 0);
	ck_assert_int_eq(chmod(path, 0755), 0);
}

static char *
rec_path(struct cfx *f, const char *name)
{
	char *p;

	ck_assert_int_gt(asprintf(&p, "%s/%s", f->dir, name), 0);
	return p;
}

/* mint.sh records its argv and CORRAL_* env, prints $CANARY. */
static void
cfx_init(struct cfx *f)
{
	char *p, body[2048];

	memset(f, 0, sizeof *f);
	f->dir = cu_tmpdir("cred");
	f->lease = cu_tmpdir("cred-lease");
	snprintf(f->canary, sizeof f->canary, "corral-canary-%d-%ld",
	    (int)getpid(), (long)time(NULL));
	p = rec_path(f, "mint.sh");
	snprintf(body, sizeof body, "#!/bin/sh\n"
	    "printf '%%s\\n' \"$1\" \"$2\" \"$3\" \"$4\" > '%s/mint.args'\n"
	    "env | grep '^CORRAL_' | sort > '%s/mint.env'\n"
	    "printf '%%s\\n' '%s'\n", f->dir, f->dir, f->canary);
	script(p, body);
	snprintf(f->mint, sizeof f->mint, "%s", p);
	free(p);
	p = rec_path(f, "revoke.sh");
	snprintf(body, sizeof body, "#!/bin/sh\n"
	    "printf '%%s\\n' \"$1\" \"$2\" \"$3\" > '%s/revoke.args'\n"
	    "env | grep '^CORRAL_' | sort > '%s/revoke.env'\n"
	    "cat > '%s/revoke.stdin'\n"
	    "echo run >> '%s/revoke.runs'\n"
	    "test ! -e '%s/revoke.fail'\n", f->dir, f->dir, f->dir, f->dir,
	    f->dir);
	script(p, body);
	snprintf(f->revoke, sizeof f->revoke, "%s", p);
	free(p);
	f->cfg.mint = f->mint;
	f->cfg.revoke = f->revoke;
	f->cfg.variable = "ANTHROPIC_API_KEY";
	f->cfg.scope = "messages";
	f->cfg.spend_cap = "5 USD";
	f->cfg.lifetime_s = 7200;
	f->cfg.timeout_ms = 10000;
}

static void
cfx_done(struct cfx *f)
{
	cu_rmrf(f->dir);
	cu_rmrf(f->lease);
	free(f->dir);
	free(f->lease);
}

static char *
rec(struct cfx *f, const char *name)
{
	char *p = rec_path(f, name), *s = cu_read_file(p, NULL);

	free(p);
	return s;
}

START_TEST(test_cred_mint_and_store)
{
	char path[4096], *s, want[128], fp[SBX_SHA256_HEX];
	struct sbx_cred *c = NULL, *c2 = NULL;
	struct stat sb;
	struct cfx f;
	char why[256];

	cfx_init(&f);
	ck_assert_int_eq(sbx_cred_mint(&f.cfg, "lease-1", f.lease, 3600, &c,
	    why, sizeof why), 0);
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(c->value, f.canary);
	ck_assert_int_eq(sbx_sha256_hex(f.canary, strlen(f.canary), fp), 0);
	ck_assert_str_eq(c->fingerprint, fp);
	ck_assert_str_eq(c->variable, "ANTHROPIC_API_KEY");
	ck_assert_str_eq(c->scope, "messages");
	ck_assert_str_eq(c->spend_cap, "5 USD");
	/* Clamped to the wall time (SPEC 8.5). */
	ck_assert_uint_eq(c->lifetime_s, 3600);
	ck_assert_int_ge(c->expires, (long long)time(NULL) + 3590);
	/* The hook got the lease, lifetime and cap, as args and env. */
	s = rec(&f, "mint.args");
	ck_assert_str_eq(s, "lease-1\n3600\n5 USD\n\n");
	free(s);
	s = rec(&f, "mint.env");
	ck_assert_ptr_nonnull(strstr(s, "CORRAL_LEASE_ID=lease-1\n"));
	ck_assert_ptr_nonnull(strstr(s, "CORRAL_CRED_LIFETIME=3600\n"));
	ck_assert_ptr_nonnull(strstr(s, "CORRAL_CRED_SPEND_CAP=5 USD\n"));
	ck_assert_ptr_nonnull(strstr(s, "CORRAL_CRED_SCOPE=messages\n"));
	free(s);
	/* The 0600 file holds exactly the value. */
	snprintf(path, sizeof path, "%s/%s", f.lease, SBX_CRED_FILE);
	ck_assert_int_eq(lstat(path, &sb), 0);
	ck_assert(S_ISREG(sb.st_mode));
	ck_assert_int_eq(sb.st_mode & 07777, 0600);
	s = cu_read_file(path, NULL);
	snprintf(want, sizeof want, "%s\n", f.canary);
	ck_assert_str_eq(s, want);
	free(s);
	ck_assert(sbx_cred_present(f.lease));
	/* A second mint would orphan the first: refused. */
	ck_assert_int_eq(sbx_cred_mint(&f.cfg, "lease-1", f.lease, 3600, &c2,
	    why, sizeof why), -EEXIST);
	ck_assert_ptr_null(c2);
	sbx_cred_free(c);
	/* A shorter configured lifetime wins over the wall time. */
	cu_rmrf(f.lease);
	ck_assert_int_eq(mkdir(f.lease, 0700), 0);
	f.cfg.lifetime_s = 60;
	ck_assert_int_eq(sbx_cred_mint(&f.cfg, "lease-1", f.lease, 3600, &c,
	    why, sizeof why), 0);
	ck_assert_uint_eq(c->lifetime_s, 60);
	sbx_cred_free(c);
	cfx_done(&f);
}
END_TEST

START_TEST(test_cred_revoke)
{
	char path[4096], *s, want[256];
	struct sbx_cred *c = NULL;
	struct cfx f;
	char why[256], fp[SBX_SHA256_HEX];

	cfx_init(&f);
	ck_assert_int_eq(sbx_cred_mint(&f.cfg, "lease-2", f.lease, 0, &c, why,
	    sizeof why), 0);
	snprintf(fp, sizeof fp, "%s", c->fingerprint);
	sbx_cred_free(c);
	snprintf(path, sizeof path, "%s/%s", f.lease, SBX_CRED_FILE);
	/* A failing revoke keeps the file, for a retry. */
	s = rec_path(&f, "revoke.fail");
	ck_assert_int_eq(cu_write_file(s, "", 0), 0);
	ck_assert_int_eq(sbx_cred_revoke(&f.cfg, "lease-2", f.lease, why,
	    sizeof why), SBX_EPROBE);
	ck_assert_ptr_nonnull(strstr(why, "revoke hook exited 1"));
	ck_assert_int_eq(access(path, F_OK), 0);
	ck_assert_int_eq(unlink(s), 0);
	free(s);
	/* The retry: the value on stdin, the ID and fingerprint as args. */
	ck_assert_int_eq(sbx_cred_revoke(&f.cfg, "lease-2", f.lease, why,
	    sizeof why), 0);
	ck_assert_int_eq(access(path, F_OK), -1);
	ck_assert(!sbx_cred_present(f.lease));
	s = rec(&f, "revoke.stdin");
	ck_assert_str_eq(s, f.canary);
	free(s);
	s = rec(&f, "revoke.args");
	snprintf(want, sizeof want, "lease-2\n%s\n\n", fp);
	ck_assert_str_eq(s, want);
	free(s);
	s = rec(&f, "revoke.env");
	ck_assert_ptr_null(strstr(s, f.canary));
	ck_assert_ptr_nonnull(strstr(s, fp));
	free(s);
	/* Idempotent: nothing stored, no hook run. */
	ck_assert_int_eq(sbx_cred_revoke(&f.cfg, "lease-2", f.lease, why,
	    sizeof why), 0);
	s = rec(&f, "revoke.runs");
	ck_assert_str_eq(s, "run\nrun\n");
	free(s);
	cfx_done(&f);
}
END_TEST

/* A minted value with no revoke hook stays, flagged (never dropped). */
START_TEST(test_cred_revoke_unconfigured)
{
	struct sbx_cred *c = NULL;
	struct cfx f;
	char why[256];

	cfx_init(&f);
	ck_assert_int_eq(sbx_cred_mint(&f.cfg, "lease-3", f.lease, 60, &c, why,
	    sizeof why), 0);
	sbx_cred_free(c);
	f.cfg.revoke = NULL;
	ck_assert_int_eq(sbx_cred_revoke(&f.cfg, "lease-3", f.lease, why,
	    sizeof why), SBX_EPOLICY);
	ck_assert(sbx_cred_present(f.lease));
	ck_assert_int_eq(sbx_cred_revoke(NULL, "lease-3", f.lease, why,
	    sizeof why), SBX_EPOLICY);
	cfx_done(&f);
}
END_TEST

struct bad_mint {
	const char *body;	/* after #!/bin/sh and CANARY=... */
	const char *why;	/* in the reason */
};

static const struct bad_mint bad_mints[] = {
	{ "echo \"$CANARY\"; echo \"oops $CANARY\" >&2; exit 3",
	  "mint hook exited 3: oops [REDACTED]" },
	{ "printf '%s\\n%s\\n' \"$CANARY\" second", "one credential" },
	{ "printf 'two words\\n'", "one credential" },
	{ "true", "one credential" },
	{ "sleep 20; echo late", "timed out" },
	{ "kill -9 $$", "exited 137" },
	{ "head -c 5000 /dev/zero | tr '\\0' a", "one credential" },
};

START_TEST(test_cred_mint_failures)
{
	const struct bad_mint *b = &bad_mints[_i];
	struct sbx_cred *c = (void *)1;
	char body[1024], why[512], *p;
	struct cfx f;
	uint64_t t0;

	cfx_init(&f);
	p = rec_path(&f, "bad.sh");
	snprintf(body, sizeof body, "#!/bin/sh\nCANARY='%s'\n%s\n", f.canary,
	    b->body);
	script(p, body);
	f.cfg.mint = p;
	f.cfg.timeout_ms = 300;
	t0 = cu_now_ms();
	ck_assert_int_eq(sbx_cred_mint(&f.cfg, "lease-4", f.lease, 60, &c,
	    why, sizeof why), SBX_EPROBE);
	ck_assert_uint_lt(cu_now_ms() - t0, 5000);
	ck_assert_ptr_null(c);
	ck_assert_msg(strstr(why, b->why) != NULL, "why: %s", why);
	/* The reason never carries the value. */
	ck_assert_ptr_null(strstr(why, f.canary));
	ck_assert(!sbx_cred_present(f.lease));
	free(p);
	cfx_done(&f);
}
END_TEST

START_TEST(test_cred_config_check)
{
	struct sbx_cred_config c = { 0 };
	struct sbx_cred *out = NULL;
	char why[256];

	ck_assert_int_eq(sbx_cred_config_check(&c, why, sizeof why), 0);
	ck_assert_int_eq(sbx_cred_config_check(NULL, why, sizeof why), 0);
	c.mint = "mint";
	c.variable = "API_KEY";
	ck_assert_int_eq(sbx_cred_config_check(&c, why, sizeof why),
	    SBX_EPOLICY);
	ck_assert_ptr_nonnull(strstr(why, "revoke"));
	c.revoke = "revoke";
	ck_assert_int_eq(sbx_cred_config_check(&c, why, sizeof why), 0);
	c.variable = "api_key";
	ck_assert_int_eq(sbx_cred_config_check(&c, why, sizeof why),
	    SBX_EPOLICY);
	c.variable = "A=B";
	ck_assert_int_eq(sbx_cred_config_check(&c, why, sizeof why),
	    SBX_EPOLICY);
	c.variable = "API_KEY";
	c.spend_cap = "5\nUSD";
	ck_assert_int_eq(sbx_cred_config_check(&c, why, sizeof why),
	    SBX_EPOLICY);
	c.spend_cap = NULL;
	/* No lifetime and no wall time: nothing bounds it. */
	ck_assert_int_eq(sbx_cred_mint(&c, "x", "/nonexistent", 0, &out, why,
	    sizeof why), SBX_EPOLICY);
	ck_assert_int_eq(sbx_cred_mint(&c, "../x", "/tmp", 60, &out, why,
	    sizeof why), -EINVAL);
	ck_assert_int_eq(sbx_cred_mint(&c, "x", "relative", 60, &out, why,
	    sizeof why), -EINVAL);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The plan.                                                           */

static char *cmd_default[] = { "/opt/agent/bin/agent", NULL };

static void
req_default(struct sbx_request *r)
{
	memset(r, 0, sizeof *r);
	r->id = "20261129-000000-000-0000";
	r->lease_dir = "/var/lib/corral/leases/x";
	r->workspace = "/var/lib/corral/leases/x/work";
	r->cmd = cmd_default;
	r->init_path = "/usr/libexec/corral/corral-sbx-init";
	r->uid = 2000007;
	r->gid = 2000007;
}

START_TEST(test_cred_plan_add)
{
	struct sbx_cred c;
	struct sbx_request r;
	struct sbx_plan *p = NULL;
	const struct sbx_data *d, *args;
	char value[] = "sk-canary-plan-0001";
	char fd[8];
	size_t i;

	memset(&c, 0, sizeof c);
	c.value = value;
	snprintf(c.variable, sizeof c.variable, "ANTHROPIC_API_KEY");
	req_default(&r);
	ck_assert_int_eq(sbx_adapter_bwrap.plan(&r, &p), 0);
	ck_assert_int_eq(sbx_cred_plan_add(p, &c), 0);
	d = sbx_plan_data_find(p, SBX_CRED_FD);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(d->len, strlen(value));
	ck_assert_mem_eq(d->bytes, value, d->len);
	/* Bound read-only inside; the options name the fd, not the value. */
	args = sbx_plan_data_find(p, SBX_BWRAP_ARGS_FD);
	snprintf(fd, sizeof fd, "%d", SBX_CRED_FD);
	ck_assert_ptr_null(memmem(args->bytes, args->len, value,
	    strlen(value)));
	{
		const char want[] = "--perms\0" "0400\0--ro-bind-data\0";

		ck_assert_ptr_nonnull(memmem(args->bytes, args->len, want,
		    sizeof want - 1));
		ck_assert_ptr_nonnull(memmem(args->bytes, args->len,
		    SBX_CRED_IN, sizeof SBX_CRED_IN));
	}
	for (i = 0; p->argv[i] != NULL; i++) {
		ck_assert_ptr_null(strstr(p->argv[i], value));
		if (strcmp(p->argv[i], SBX_BWRAP_INIT) == 0) {
			ck_assert_str_eq(p->argv[i + 1], "--cred-env");
			ck_assert_str_eq(p->argv[i + 2], "ANTHROPIC_API_KEY");
			ck_assert_str_eq(p->argv[i + 3], "--");
		}
	}
	for (i = 0; p->envp[i] != NULL; i++)
		ck_assert_ptr_null(strstr(p->envp[i], value));
	/* Twice: the fd is taken. Bad values: refused, plan untouched. */
	ck_assert_int_eq(sbx_cred_plan_add(p, &c), -EINVAL);
	sbx_plan_free(p);
	ck_assert_int_eq(sbx_adapter_bwrap.plan(&r, &p), 0);
	snprintf(c.variable, sizeof c.variable, "lower");
	ck_assert_int_eq(sbx_cred_plan_add(p, &c), -EINVAL);
	snprintf(c.variable, sizeof c.variable, "K");
	c.value = "two words";
	ck_assert_int_eq(sbx_cred_plan_add(p, &c), -EINVAL);
	ck_assert_ptr_null(sbx_plan_data_find(p, SBX_CRED_FD));
	sbx_plan_free(p);
	/* Never into the exec zone (SPEC 8.5: the agent zone only). */
	c.value = value;
	ck_assert_int_eq(sbx_bwrap_exec_plan(&r, &p), 0);
	ck_assert_int_eq(sbx_cred_plan_add(p, &c), -EINVAL);
	ck_assert_ptr_null(sbx_plan_data_find(p, SBX_CRED_FD));
	sbx_plan_free(p);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The canary, from the host side, around a real agent zone.           */

struct zone {
	char *uiddir, *stage, *ws;
	char id[64];
	unsigned slot;
	uid_t uid;
	gid_t gid;
	struct sbx_plan *plan;
	struct sbx_exec_result res;
	int rc;
	atomic_bool done;
	pthread_t th;
};

static void
copy_exe(const char *from, const char *to)
{
	size_t len = 0;
	char *buf = cu_read_file(from, &len);

	ck_assert_msg(buf != NULL, "cannot read %s", from);
	ck_assert_int_eq(cu_write_file(to, buf, len), 0);
	ck_assert_int_eq(chmod(to, 0755), 0);
	free(buf);
}

static void *
zone_main(void *arg)
{
	struct zone *z = arg;
	struct sbx_exec_opts o = { .cap = 1 << 16, .timeout_ms = 60000,
		.stdin_fd = -1 };

	z->rc = sbx_exec_run(z->plan, &o, &z->res);
	z->done = true;
	return NULL;
}

/* Does the file at path contain needle? (unreadable: no) */
static bool
file_has(const char *path, const char *needle)
{
	size_t len = 0;
	char *s = cu_read_file(path, &len);
	bool hit = s != NULL && memmem(s, len, needle, strlen(needle)) != NULL;

	free(s);
	return hit;
}

static bool
same_link(const char *a, const char *b)
{
	char x[128], y[128];
	ssize_t n = readlink(a, x, sizeof x - 1), m;

	if (n < 0)
		return false;
	x[n] = '\0';
	if ((m = readlink(b, y, sizeof y - 1)) < 0)
		return false;
	y[m] = '\0';
	return strcmp(x, y) == 0;
}

START_TEST(test_cred_canary_host_scan)
{
	char why[256], *init, path[4096], *env, *init_st, go[4096];
	char *agent[] = { "/bin/sh", "-c", "echo \"inside=$ANTHROPIC_API_KEY\";"
	    " while [ ! -e /work/go ]; do sleep 0.05; done", NULL };
	struct sbx_request req;
	struct sbx_cred *c = NULL;
	struct zone z;
	struct cfx f;
	DIR *d;
	struct dirent *e;
	int inside = 0, outside = 0;
	uint64_t end;
	size_t n;
	char *scrubbed;

	cfx_init(&f);
	memset(&z, 0, sizeof z);
	ck_assert_msg(sbx_adapter_bwrap.probe(why, sizeof why) == 0,
	    "bwrap probe: %s", why);
	ck_assert_int_eq(sbx_cred_mint(&f.cfg, "lease-canary", f.lease, 600,
	    &c, why, sizeof why), 0);
	ck_assert_int_gt(asprintf(&z.uiddir, "%s", SBX_UID_DIR), 0);
	snprintf(z.id, sizeof z.id, "cred-%d", (int)getpid());
	ck_assert_int_eq(sbx_uid_claim(z.uiddir, cu_scope(), z.id, &z.slot), 0);
	ck_assert_int_eq(sbx_uid_of_slot(z.slot, &z.uid, &z.gid), 0);
	z.ws = cu_tmpdir("cred-work");
	ck_assert_int_eq(chown(z.ws, z.uid, z.gid), 0);
	z.stage = cu_tmpdir("cred-bin");
	ck_assert_int_eq(chmod(z.stage, 0755), 0);
	init = getenv("CORRAL_SBX_INIT");
	ck_assert_msg(init != NULL, "CORRAL_SBX_INIT is not set (ctest)");
	ck_assert_int_gt(asprintf(&init_st, "%s/corral-sbx-init", z.stage),
	    0);
	copy_exe(init, init_st);
	memset(&req, 0, sizeof req);
	req.id = z.id;
	req.lease_dir = f.lease;
	req.workspace = z.ws;
	req.cmd = agent;
	req.init_path = init_st;
	req.uid = z.uid;
	req.gid = z.gid;
	ck_assert_int_eq(sbx_adapter_bwrap.plan(&req, &z.plan), 0);
	ck_assert_int_eq(sbx_cred_plan_add(z.plan, c), 0);
	ck_assert_int_eq(pthread_create(&z.th, NULL, zone_main, &z), 0);

	/* Wait for the agent: a process of the lease uid in another pid ns
	 * holding the variable. */
	end = cu_now_ms() + 20000;
	while (inside == 0 && !z.done && cu_now_ms() < end) {
		if ((d = opendir("/proc")) == NULL)
			break;
		while ((e = readdir(d)) != NULL) {
			struct stat sb;

			if (e->d_name[0] < '0' || e->d_name[0] > '9')
				continue;
			snprintf(path, sizeof path, "/proc/%s", e->d_name);
			if (stat(path, &sb) < 0 || sb.st_uid != z.uid)
				continue;
			snprintf(path, sizeof path, "/proc/%s/environ",
			    e->d_name);
			if (file_has(path, c->value))
				inside++;
		}
		closedir(d);
		if (inside == 0) {
			struct timespec ts = { 0, 20 * 1000 * 1000 };

			nanosleep(&ts, NULL);
		}
	}
	/* The positive control: the scan sees it where it belongs. */
	ck_assert_msg(inside > 0, "the agent never held the credential");

	/* Now every process outside the agent zone: cmdline and environ. */
	ck_assert_ptr_nonnull(d = opendir("/proc"));
	while ((e = readdir(d)) != NULL) {
		char ns[4096];

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(ns, sizeof ns, "/proc/%s/ns/pid", e->d_name);
		if (!same_link(ns, "/proc/self/ns/pid"))
			continue;	/* inside the zone's pid namespace */
		outside++;
		snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
		ck_assert_msg(!file_has(path, c->value), "canary in %s", path);
		snprintf(path, sizeof path, "/proc/%s/environ", e->d_name);
		ck_assert_msg(!file_has(path, c->value), "canary in %s", path);
	}
	closedir(d);
	ck_assert_int_gt(outside, 3);
	/* Nothing in the lease directory but the 0600 file holds it. */
	ck_assert_ptr_nonnull(d = opendir(f.lease));
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' ||
		    strcmp(e->d_name, SBX_CRED_FILE) == 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", f.lease, e->d_name);
		ck_assert_msg(!file_has(path, c->value), "canary in %s", path);
	}
	closedir(d);

	snprintf(go, sizeof go, "%s/go", z.ws);
	ck_assert_int_eq(cu_write_file(go, "", 0), 0);
	pthread_join(z.th, NULL);
	ck_assert_int_eq(z.rc, 0);
	ck_assert_msg(WIFEXITED(z.res.wstatus) &&
	    WEXITSTATUS(z.res.wstatus) == 0, "zone: %s", z.res.err);
	/* The agent saw the value; what corral keeps of its output is
	 * scrubbed. */
	ck_assert_ptr_nonnull(strstr(z.res.out, c->value));
	scrubbed = sbx_scrub_copy(z.res.out, z.res.out_len, c->value, &n);
	ck_assert_ptr_null(strstr(scrubbed, c->value));
	ck_assert_ptr_nonnull(strstr(scrubbed, "inside=[REDACTED]"));
	free(scrubbed);
	env = rec(&f, "mint.env");
	ck_assert_ptr_null(strstr(env, c->value));
	free(env);
	/* Teardown revokes; the file goes. */
	ck_assert_int_eq(sbx_cred_revoke(&f.cfg, "lease-canary", f.lease, why,
	    sizeof why), 0);
	ck_assert(!sbx_cred_present(f.lease));

	sbx_exec_result_clear(&z.res);
	sbx_plan_free(z.plan);
	sbx_cred_free(c);
	ck_assert_int_eq(sbx_uid_release(z.uiddir, z.slot, cu_scope(), z.id), 0);
	cu_rmrf(z.ws);
	cu_rmrf(z.stage);
	free(z.ws);
	free(z.stage);
	free(z.uiddir);
	free(init_st);
	cfx_done(&f);
}
END_TEST

Suite *
cred_suite(void)
{
	Suite *s = suite_create("cred");
	TCase *tc = tcase_create("Core");
	TCase *ti = tcase_create("Integration");

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_cred_scrub_matches_naive, 0,
	    (int)(sizeof scrub_cases / sizeof scrub_cases[0]));
	tcase_add_loop_test(tc, test_cred_scrub_random, 0, 8);
	tcase_add_test(tc, test_cred_scrub_edges);
	tcase_add_test(tc, test_cred_mint_and_store);
	tcase_add_test(tc, test_cred_revoke);
	tcase_add_test(tc, test_cred_revoke_unconfigured);
	tcase_add_loop_test(tc, test_cred_mint_failures, 0,
	    (int)(sizeof bad_mints / sizeof bad_mints[0]));
	tcase_add_test(tc, test_cred_config_check);
	tcase_add_test(tc, test_cred_plan_add);
	suite_add_tcase(s, tc);
	tcase_set_timeout(ti, 120);
	tcase_add_test(ti, test_cred_canary_host_scan);
	suite_add_tcase(s, ti);
	return s;
}
