/*
 * test_names.c: names are unique among live leases (issue 21), chosen by
 * the journal's insert in its own IMMEDIATE transaction: NAME, then
 * NAME-2, NAME-3...; an ended lease's name is free again; a long name is
 * cut at a character to leave the suffix room. Several processes
 * inserting the same name at once on one real SQLite file (no state lock
 * around them) all get different names.
 */
#include <sqlite3.h>

#include "lease_test.h"

static char *tmp;
static char *db;

static void
setup(void)
{
	tmp = cu_tmpdir("names");
	db = lt_fmt("%s/%s", tmp, "corral.db");
}

static void
teardown(void)
{
	cu_rmrf(tmp);
	free(tmp);
	free(db);
}

/* Insert a lease asking for name; returns the name it got in got. */
static int
insert_named(struct lease_store *s, const char *name, char *got,
    char id[LEASE_ID_LEN + 1])
{
	struct lease_spec sp = {
		.name = name,
		.mode = LEASE_MODE_TRUSTED_LOCAL,
		.unique_name = true,
		.name_out = got,
	};

	return lease_record_insert(s, &sp, id);
}

START_TEST(test_names_suffixed_and_freed)
{
	struct lease_store *s = lt_store_open(db);
	char got[LEASE_NAME_MAX + 1], id[LEASE_ID_LEN + 1];
	char first[LEASE_ID_LEN + 1];
	struct lease_spec plain = { .name = "x", .mode =
		LEASE_MODE_TRUSTED_LOCAL, .name_out = got };

	ck_assert_int_eq(insert_named(s, "x", got, first), 0);
	ck_assert_str_eq(got, "x");
	ck_assert_int_eq(insert_named(s, "x", got, id), 0);
	ck_assert_str_eq(got, "x-2");
	ck_assert_int_eq(insert_named(s, "x", got, id), 0);
	ck_assert_str_eq(got, "x-3");
	/* an ended lease's name is free again */
	ck_assert_int_eq(lease_record_transition(s, first, LEASE_EV_CANCEL,
	    NULL, NULL), 0);
	ck_assert_int_eq(insert_named(s, "x", got, id), 0);
	ck_assert_str_eq(got, "x");
	/* without unique_name the name is taken as asked */
	ck_assert_int_eq(lease_record_insert(s, &plain, id), 0);
	ck_assert_str_eq(got, "x");
	/* no name: the ID */
	ck_assert_int_eq(insert_named(s, NULL, got, id), 0);
	ck_assert_str_eq(got, id);
	lease_store_close(s);
}
END_TEST

START_TEST(test_names_long_cut_at_a_character)
{
	struct lease_store *s = lt_store_open(db);
	char name[LEASE_NAME_MAX + 1], got[LEASE_NAME_MAX + 1];
	char id[LEASE_ID_LEN + 1];
	size_t n;

	/* 125 bytes of a, then a 2-byte character: 127 bytes */
	memset(name, 'a', LEASE_NAME_MAX - 3);
	memcpy(name + LEASE_NAME_MAX - 3, "\xc3\xa9", 3);
	ck_assert_uint_eq(strlen(name), LEASE_NAME_MAX - 1);
	ck_assert_int_eq(insert_named(s, name, got, id), 0);
	ck_assert_str_eq(got, name);
	/* "-2" leaves room for 126 bytes: the character goes whole */
	ck_assert_int_eq(insert_named(s, name, got, id), 0);
	n = strlen(got);
	ck_assert_uint_eq(n, LEASE_NAME_MAX - 1);
	ck_assert_int_eq(strncmp(got, name, LEASE_NAME_MAX - 3), 0);
	ck_assert_str_eq(got + LEASE_NAME_MAX - 3, "-2");
	ck_assert_int_eq(insert_named(s, name, got, id), 0);
	ck_assert_str_eq(got + LEASE_NAME_MAX - 3, "-3");
	lease_store_close(s);
}
END_TEST

#define RACERS 8
#define EACH 5

START_TEST(test_names_racing_processes)
{
	struct lease_store *s = lt_store_open(db);
	pid_t pids[RACERS];
	int go[2], i, j;
	char c = 0;

	lease_store_close(s);		/* the schema exists before the race */
	ck_assert_int_eq(pipe(go), 0);
	for (i = 0; i < RACERS; i++) {
		pids[i] = fork();
		ck_assert_int_ge(pids[i], 0);
		if (pids[i] == 0) {
			struct lease_store *cs;
			char got[LEASE_NAME_MAX + 1], id[LEASE_ID_LEN + 1];

			close(go[1]);
			if (lease_store_open(&cs, db) != 0)
				_exit(1);
			if (read(go[0], &c, 1) != 0)	/* EOF: all go */
				_exit(2);
			for (j = 0; j < EACH; j++)
				if (insert_named(cs, "racer", got, id) != 0)
					_exit(3);
			lease_store_close(cs);
			_exit(0);
		}
	}
	close(go[0]);
	close(go[1]);
	for (i = 0; i < RACERS; i++)
		ck_assert_int_eq(lt_wait(pids[i]), 0);
	s = lt_store_open(db);
	{
		struct lease_record *v = NULL;
		size_t n = 0, k, m;

		ck_assert_int_eq(lease_record_list(s, 0, &v, &n), 0);
		ck_assert_uint_eq(n, RACERS * EACH);
		for (k = 0; k < n; k++)
			for (m = k + 1; m < n; m++)
				ck_assert_msg(strcmp(v[k].name, v[m].name) != 0,
				    "two live leases named %s", v[k].name);
		lease_record_list_free(v, n);
	}
	lease_store_close(s);
}
END_TEST

Suite *names_suite(void);

Suite *
names_suite(void)
{
	Suite *su = suite_create("names");
	TCase *tc = tcase_create("names");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_names_suffixed_and_freed);
	tcase_add_test(tc, test_names_long_cut_at_a_character);
	tcase_add_test(tc, test_names_racing_processes);
	suite_add_tcase(su, tc);
	return su;
}
