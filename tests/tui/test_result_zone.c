/*
 * test_result_zone.c: the declared checks of a result run for real in the
 * exec zone (SPEC 7.3, 8.2) through tui_checks_finish: the lease's policy
 * gives the checks, each runs under bwrap as a uid slot of its own on a
 * fresh copy of the result tree, hermetic (TZ, SOURCE_DATE_EPOCH at the
 * base commit's time), without network (a host listener is never reached,
 * confirmed on the host), with its exit status, a bounded log and whether
 * the agent changed its inputs recorded. Needs root and bwrap.
 */
#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include "lease/lease_test.h"
#include "tui/runtime/runtime.h"

static char *tmp, *repo, *state;
static char c[3][41];
static struct tui_ctx ctx;

static void
setup(void)
{
	ck_assert_int_ge(lease_git_init(), 0);
	tmp = cu_tmpdir("zone");
	repo = lt_make_repo(tmp, c);
	state = lt_fmt("%s/%s", tmp, "state");
	ck_assert_int_eq(mkdir(state, 0700), 0);
	ck_assert_int_eq(setenv("CORRAL_STATE_DIR", state, 1), 0);
	ck_assert_int_eq(tui_ctx_init(&ctx, "corral"), 0);
	ck_assert_ptr_nonnull(tui_ctx_store(&ctx));
}

static void
teardown(void)
{
	tui_ctx_free(&ctx);
	cu_rmrf(tmp);
	free(tmp);
	free(repo);
	free(state);
	lease_git_shutdown();
}

static const char *
jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static json_t *
check_named(json_t *a, const char *name)
{
	json_t *e;
	size_t i;

	json_array_foreach(a, i, e)
		if (strcmp(jstr(e, "name"), name) == 0)
			return e;
	ck_abort_msg("no check %s", name);
	return NULL;
}

/* The log of check name from the receipts. */
static char *
log_of(const char *id, const char *name)
{
	json_t *entries, *e, *f;
	char *log = NULL;
	size_t i;

	ck_assert_int_eq(lease_receipt_entries(ctx.store, id, &entries), 0);
	json_array_foreach(entries, i, e) {
		f = json_object_get(e, "fields");
		if (strcmp(jstr(e, "kind"), "check") == 0 &&
		    strcmp(jstr(f, "name"), name) == 0)
			log = strdup(jstr(f, "log"));
	}
	json_decref(entries);
	ck_assert_ptr_nonnull(log);
	return log;
}

START_TEST(test_result_zone_checks)
{
	struct sockaddr_in sa;
	struct lease_spec spec;
	struct lease_lock *lk;
	struct lease_record r;
	struct pollfd pfd;
	socklen_t sl = sizeof sa;
	char id[LEASE_ID_LEN + 1], policy[2048], *ws, *log;
	json_t *res, *a;
	int lfd, rc;

	/* a host listener the zone must not reach */
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sa, sizeof sa), 0);
	ck_assert_int_eq(listen(lfd, 4), 0);
	ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&sa, &sl), 0);

	memset(&spec, 0, sizeof spec);
	spec.mode = LEASE_MODE_SANDBOXED;
	spec.adapter = "bwrap";
	ck_assert_int_eq(lease_record_insert(ctx.store, &spec, id), 0);
	ck_assert_int_eq(lease_lock_acquire(state, 5000, &lk), 0);
	ck_assert_int_eq(lease_provision_git(ctx.store, lk, state, id, repo,
	    "main", NULL), 0);
	lease_lock_release(lk);
	ck_assert_int_eq(lease_record_transition(ctx.store, id, LEASE_EV_START,
	    "test", NULL), 0);
	snprintf(policy, sizeof policy,
	    "[checks]\n"
	    "copy = test -f README && test -f src/new.c && echo copy-ok\n"
	    "hermetic = echo \"tz=$TZ epoch=$SOURCE_DATE_EPOCH\"; "
	    "test \"$SOURCE_DATE_EPOCH\" = 1700000000 && test \"$TZ\" = UTC\n"
	    "writes = touch built && echo wrote\n"
	    "network = python3 -c 'import socket; socket.create_connection("
	    "(\"127.0.0.1\", %d), 2)' && echo REACHED || echo unreachable\n"
	    "failing = echo about to fail; exit 3\n"
	    "compile = cc -c src/new.c -o /tmp/new.o\n",
	    ntohs(sa.sin_port));
	ck_assert_int_eq(lease_record_set_text(ctx.store, id,
	    LEASE_FIELD_POLICY, policy), 0);
	ws = lease_path_workspace(state, id);
	lt_write(ws, "src/new.c", "int fresh;\n");
	free(ws);

	rc = tui_checks_finish(&ctx, id, NULL, NULL, NULL);
	ck_assert_msg(rc == 0, "finish: %d %s", rc,
	    lease_store_errmsg(ctx.store));
	ck_assert_int_eq(lease_record_get(ctx.store, id, &r), 0);
	ck_assert_int_eq(r.state, LEASE_STATE_RESULT_READY);
	res = json_loads(r.result, 0, NULL);
	lease_record_clear(&r);
	a = json_object_get(res, "checks");
	ck_assert_int_eq(json_array_size(a), 6);
	ck_assert_str_eq(jstr(check_named(a, "copy"), "status"), "pass");
	ck_assert_str_eq(jstr(check_named(a, "hermetic"), "status"), "pass");
	ck_assert_str_eq(jstr(check_named(a, "writes"), "status"), "pass");
	ck_assert_str_eq(jstr(check_named(a, "failing"), "status"), "fail");
	ck_assert_int_eq(json_integer_value(json_object_get(check_named(a,
	    "failing"), "exit")), 3);
	ck_assert(json_is_false(json_object_get(check_named(a, "compile"),
	    "independent")));
	/* it names src/new.c, which the agent added */
	ck_assert(json_is_false(json_object_get(check_named(a, "copy"),
	    "independent")));
	ck_assert(json_is_true(json_object_get(check_named(a, "hermetic"),
	    "independent")));
	log = log_of(id, "network");
	ck_assert_msg(strstr(log, "unreachable") != NULL, "%s", log);
	free(log);
	log = log_of(id, "failing");
	ck_assert_ptr_nonnull(strstr(log, "about to fail"));
	free(log);
	/* confirmed on the host: nobody connected */
	pfd.fd = lfd;
	pfd.events = POLLIN;
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	close(lfd);
	json_decref(res);
}
END_TEST

Suite *result_zone_suite(void);

Suite *
result_zone_suite(void)
{
	Suite *s = suite_create("result_zone");
	TCase *tc = tcase_create("Integration");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_result_zone_checks);
	suite_add_tcase(s, tc);
	return s;
}
