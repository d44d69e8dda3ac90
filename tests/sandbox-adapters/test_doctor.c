/*
 * test_doctor.c: the preflight (SPEC 8.7; SANDBOX.md 5.c) on this host:
 * every check passes for real (bwrap, user namespaces as a lease uid, the
 * real filter inside the real agent zone confirmed from the host, an exec
 * zone without network, cgroups); the policy checks name their halt
 * (credential_scope_invalid 13, isolation_unsatisfiable 30); the facts for
 * receipts; the adversarial marker; and the probe itself sees a zone whose
 * filter is missing (so a missing filter cannot pass unnoticed).
 */
#include <check.h>
#include <pty.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "sbx_test.h"

Suite *doctor_suite(void);

static void
opts_init(struct sbx_doctor_opts *o, const struct st_lease *l,
    const struct sbx_policy *p, const char *state)
{
	memset(o, 0, sizeof *o);
	o->policy = p;
	o->state_dir = state;
	o->init_path = st_helper("corral-sbx-init");
	o->probe_path = st_helper("corral-sbx-probe");
	o->uid = l->uid;
	o->gid = l->gid;
}

static void
opts_fini(struct sbx_doctor_opts *o)
{
	free((char *)o->init_path);
	free((char *)o->probe_path);
}

static const struct sbx_doctor_check *
find_check(const struct sbx_doctor_report *r, const char *name)
{
	for (int i = 0; i < r->nchecks; i++) {
		if (strcmp(r->checks[i].name, name) == 0)
			return &r->checks[i];
	}
	return NULL;
}

START_TEST(test_doctor_host_passes)
{
	static const char *const want[] = { "policy", "bwrap", "filter",
		"cgroups", "tiocsti", "userns", "seccomp", "exec_network" };
	struct sbx_policy *p = sbx_policy_new_default();
	struct sbx_doctor_opts o;
	struct sbx_doctor_report r;
	struct st_lease l;
	char *state = cu_tmpdir("doctor-state"), hex[SBX_SHA256_HEX];
	int rc;

	st_lease_init(&l, "doctor");
	opts_init(&o, &l, p, state);
	rc = sbx_doctor_run(&o, &r);
	ck_assert_msg(rc == 0, "halt %d (%s): %s", r.halt,
	    sbx_halt_name(r.halt), r.detail);
	ck_assert_int_eq(r.halt, SBX_HALT_NONE);
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		const struct sbx_doctor_check *c = find_check(&r, want[i]);

		ck_assert_msg(c != NULL, "no %s check", want[i]);
		ck_assert_msg(c->ok, "%s: %s", c->name, c->detail);
	}
	/* The facts every receipt carries. */
	ck_assert_ptr_nonnull(strstr(r.facts.kernel, "Linux "));
	ck_assert_str_eq(r.facts.bwrap_path, "/usr/bin/bwrap");
	ck_assert_str_eq(r.facts.bwrap_version, "0.8.0");
	ck_assert_int_eq(sbx_sha256_file("/usr/bin/bwrap", hex), 0);
	ck_assert_str_eq(r.facts.bwrap_sha256, hex);
	ck_assert_int_eq(sbx_seccomp_hash(hex), 0);
	ck_assert_str_eq(r.facts.filter_sha256, hex);
	ck_assert_int_eq(sbx_policy_hash(p, hex), 0);
	ck_assert_str_eq(r.facts.policy_sha256, hex);
	ck_assert_str_eq(r.facts.cgroup_mode, "v1");
	ck_assert_int_ge(r.facts.legacy_tiocsti, 0);
	ck_assert_str_eq(r.facts.corral_version, CORRAL_VERSION);
	/* Nothing of the probe is left on the host. */
	ck_assert_int_eq(st_wait_no_procs(l.uid, 5000), 0);
	opts_fini(&o);
	sbx_policy_free(p);
	cu_rmrf(state);
	free(state);
	st_lease_fini(&l);
}
END_TEST

START_TEST(test_doctor_policy_halts)
{
	static char *homes[] = { "/home/op", NULL };
	static const struct {
		const char *policy;
		int halt;
		const char *why;
	} cases[] = {
		{ "[mounts]\nro = /opt/tools\n", SBX_HALT_NONE, "" },
		{ "[mounts]\nro = /home/op/.ssh\n",
		    SBX_HALT_CREDENTIAL_SCOPE_INVALID, "/home/op/.ssh" },
		{ "[mounts]\nro = /home/op/.claude/projects\n",
		    SBX_HALT_CREDENTIAL_SCOPE_INVALID, ".claude" },
		{ "[mounts]\nro = /home/op/.config\n",
		    SBX_HALT_CREDENTIAL_SCOPE_INVALID, ".config" },
		{ "[mounts]\nro = /home/op\n",
		    SBX_HALT_CREDENTIAL_SCOPE_INVALID, "/home/op" },
		{ "[mounts]\nro = /home\n",
		    SBX_HALT_CREDENTIAL_SCOPE_INVALID, "/home" },
		{ "[mounts]\nro = /home/op/.aws/credentials\n",
		    SBX_HALT_CREDENTIAL_SCOPE_INVALID, ".aws" },
		{ "[mounts]\nro = /home/op/.gnupg\n",
		    SBX_HALT_CREDENTIAL_SCOPE_INVALID, ".gnupg" },
		{ "[mounts]\nro = /root/.ssh\n",
		    SBX_HALT_CREDENTIAL_SCOPE_INVALID, "/root" },
		{ "[mounts]\nro = /run/docker.sock\n",
		    SBX_HALT_CREDENTIAL_SCOPE_INVALID, "docker.sock" },
		{ "[mounts]\nro = /var/run\n",
		    SBX_HALT_CREDENTIAL_SCOPE_INVALID, "/var/run" },
		{ "[mounts]\nro = /etc\n",
		    SBX_HALT_CREDENTIAL_SCOPE_INVALID, "/etc/shadow" },
		{ "[mounts]\nro = /tmp/ssh-agent\n",
		    SBX_HALT_CREDENTIAL_SCOPE_INVALID, "ssh-agent" },
		{ "[mounts]\nro = /home/opx\n", SBX_HALT_NONE, "" },
		{ "[network]\nallow = *\n", SBX_HALT_ISOLATION_UNSATISFIABLE,
		    "unrestricted" },
		{ "[network]\nallow = *:443\n",
		    SBX_HALT_ISOLATION_UNSATISFIABLE, "unrestricted" },
		{ "[network]\nallow = api.example.com:443\n", SBX_HALT_NONE,
		    "" },
	};
	char **cred = NULL, why[256];
	struct sbx_policy_error err;
	struct sbx_policy *p;
	int halt;

	ck_assert_int_eq(sbx_doctor_credential_paths(homes,
	    "/tmp/ssh-agent/agent.1", &cred), 0);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ck_assert_int_eq(sbx_policy_load(cases[i].policy, "p", NULL,
		    &p, &err), 0);
		halt = sbx_doctor_policy(p, cred, why, sizeof why);
		ck_assert_msg(halt == cases[i].halt, "%s: halt %d (%s)",
		    cases[i].policy, halt, why);
		ck_assert_msg(strstr(why, cases[i].why) != NULL, "%s: '%s'",
		    cases[i].policy, why);
		sbx_policy_free(p);
	}
	sbx_strv_free(cred);
	ck_assert_str_eq(sbx_halt_name(13), "credential_scope_invalid");
	ck_assert_str_eq(sbx_halt_name(14), "hermeticity_violation");
	ck_assert_str_eq(sbx_halt_name(30), "isolation_unsatisfiable");
	ck_assert_str_eq(sbx_halt_name(0), "none");
	ck_assert_ptr_null(sbx_halt_name(7));
}
END_TEST

/* A mount that is a symlink to a credential directory is one. */
START_TEST(test_doctor_policy_symlink)
{
	struct sbx_policy_error err;
	struct sbx_policy *p;
	struct sbx_doctor_opts o;
	struct sbx_doctor_report r;
	char *d = cu_tmpdir("doctor-link"), *home, *ssh, *link, *text;
	char *homes[2];

	ck_assert_int_gt(asprintf(&home, "%s/home", d), 0);
	ck_assert_int_gt(asprintf(&ssh, "%s/.ssh", home), 0);
	ck_assert_int_gt(asprintf(&link, "%s/innocent", d), 0);
	ck_assert_int_eq(mkdir(home, 0700), 0);
	ck_assert_int_eq(mkdir(ssh, 0700), 0);
	ck_assert_int_eq(symlink(ssh, link), 0);
	ck_assert_int_gt(asprintf(&text, "[mounts]\nro = %s\n", link), 0);
	ck_assert_int_eq(sbx_policy_load(text, "p", NULL, &p, &err), 0);
	homes[0] = home;
	homes[1] = NULL;
	memset(&o, 0, sizeof o);
	o.policy = p;
	o.state_dir = "/var/empty/corral-test-doctor";
	o.homes = homes;
	o.quick = true;
	ck_assert_int_eq(sbx_doctor_run(&o, &r), SBX_EPROBE);
	ck_assert_int_eq(r.halt, SBX_HALT_CREDENTIAL_SCOPE_INVALID);
	ck_assert_ptr_nonnull(strstr(r.detail, ".ssh"));
	sbx_policy_free(p);
	free(text);
	free(link);
	free(ssh);
	free(home);
	cu_rmrf(d);
	free(d);
}
END_TEST

/*
 * The state directory, its parents and what is below it are never mounted,
 * nor a symlink to a host system path (the parser sees only the name).
 */
START_TEST(test_doctor_policy_state_dir)
{
	struct sbx_policy_error err;
	struct sbx_policy *p;
	struct sbx_doctor_opts o;
	struct sbx_doctor_report r;
	char *d = cu_tmpdir("doctor-state"), *state, *link, *text;
	char *homes[] = { "/home/nobody-here", NULL };
	const char *mounts[4], *want[4];

	ck_assert_int_gt(asprintf(&state, "%s/state", d), 0);
	ck_assert_int_gt(asprintf(&link, "%s/innocent", d), 0);
	ck_assert_int_eq(mkdir(state, 0700), 0);
	ck_assert_int_eq(symlink("/proc", link), 0);
	mounts[0] = state;
	want[0] = "state directory";
	mounts[1] = d;
	want[1] = "state directory";
	mounts[2] = link;
	want[2] = "/proc";
	mounts[3] = "/opt/tools";
	want[3] = NULL;
	for (size_t i = 0; i < 4; i++) {
		ck_assert_int_gt(asprintf(&text, "[mounts]\nro = %s\n",
		    mounts[i]), 0);
		ck_assert_int_eq(sbx_policy_load(text, "p", NULL, &p, &err),
		    0);
		memset(&o, 0, sizeof o);
		o.policy = p;
		o.homes = homes;
		o.state_dir = state;
		o.quick = true;
		ck_assert_int_eq(sbx_doctor_run(&o, &r), (want[i] == NULL ? 0 :
		    SBX_EPROBE));
		if (want[i] == NULL) {
			ck_assert_msg(r.checks[0].halt == SBX_HALT_NONE, "%s: %s",
			    mounts[i], r.checks[0].detail);
		} else {
			ck_assert_msg(r.halt == SBX_HALT_CREDENTIAL_SCOPE_INVALID,
			    "%s: halt %d (%s)", mounts[i], r.halt, r.detail);
			ck_assert_msg(strstr(r.detail, want[i]) != NULL,
			    "%s: '%s'", mounts[i], r.detail);
		}
		sbx_policy_free(p);
		free(text);
	}
	free(link);
	free(state);
	cu_rmrf(d);
	free(d);
}
END_TEST

/*
 * A preflight killed midway leaves its probe cgroup and scratch directory;
 * the next run of the same state directory takes them back (their pid is
 * gone), never a live run's and never another state directory's.
 */
START_TEST(test_doctor_reclaim)
{
	struct sbx_cgroup *dead = NULL, *live = NULL, *other = NULL;
	char *state = cu_tmpdir("doctor-reclaim"), tag[32], id[64];
	char dir_dead[256], dir_live[256], dir_other[256];
	struct stat sb;
	pid_t gone;

	ck_assert_int_eq(geteuid(), 0);
	if ((gone = fork()) == 0)
		_exit(0);
	ck_assert_int_eq(waitpid(gone, NULL, 0), gone);
	snprintf(id, sizeof id, SBX_DOCTOR_ID_PREFIX "%d", (int)gone);
	ck_assert_int_eq(sbx_cgroup_locate(state, id, &dead), 0);
	ck_assert_int_eq(sbx_cgroup_create(dead, NULL), 0);
	ck_assert_int_eq(sbx_cgroup_locate("/var/empty/other-state", id,
	    &other), 0);
	ck_assert_int_eq(sbx_cgroup_create(other, NULL), 0);
	snprintf(id, sizeof id, SBX_DOCTOR_ID_PREFIX "%d", (int)getpid());
	ck_assert_int_eq(sbx_cgroup_locate(state, id, &live), 0);
	ck_assert_int_eq(sbx_cgroup_create(live, NULL), 0);
	ck_assert_int_eq(sbx_cgroup_scope_name(state, tag, sizeof tag), 0);
	snprintf(dir_dead, sizeof dir_dead, "/tmp/corral-doctor-%s-%d-x", tag,
	    (int)gone);
	snprintf(dir_live, sizeof dir_live, "/tmp/corral-doctor-%s-%d-x", tag,
	    (int)getpid());
	ck_assert_int_eq(sbx_cgroup_scope_name("/var/empty/other-state", tag,
	    sizeof tag), 0);
	snprintf(dir_other, sizeof dir_other, "/tmp/corral-doctor-%s-%d-x",
	    tag, (int)gone);
	ck_assert_int_eq(mkdir(dir_dead, 0700), 0);
	ck_assert_int_eq(mkdir(dir_live, 0700), 0);
	ck_assert_int_eq(mkdir(dir_other, 0700), 0);

	ck_assert_int_eq(sbx_doctor_reclaim(state), 2);
	ck_assert_int_ne(stat(dead->c[0].dir, &sb), 0);
	ck_assert_int_ne(stat(dir_dead, &sb), 0);
	ck_assert_int_eq(stat(live->c[0].dir, &sb), 0);
	ck_assert_int_eq(stat(dir_live, &sb), 0);
	ck_assert_int_eq(stat(other->c[0].dir, &sb), 0);
	ck_assert_int_eq(stat(dir_other, &sb), 0);

	ck_assert_int_eq(sbx_cgroup_teardown(live, 5000), 0);
	ck_assert_int_eq(sbx_cgroup_teardown(other, 5000), 0);
	rmdir(dir_live);
	rmdir(dir_other);
	sbx_cgroup_free(dead);
	sbx_cgroup_free(live);
	sbx_cgroup_free(other);
	cu_rmrf(state);
	free(state);
}
END_TEST

START_TEST(test_doctor_marker)
{
	struct sbx_facts f, g;
	char *state = cu_tmpdir("doctor-mark");
	struct sbx_policy *p = sbx_policy_new_default();

	ck_assert_int_eq(sbx_doctor_facts(p, state, &f), 0);
	ck_assert(!f.verified);
	ck_assert(!sbx_doctor_verified(state, &f));
	ck_assert_int_eq(sbx_doctor_mark_verified(state, &f), 0);
	ck_assert(sbx_doctor_verified(state, &f));
	ck_assert_int_eq(sbx_doctor_facts(p, state, &g), 0);
	ck_assert(g.verified);
	/* Another kernel, bwrap, filter or corral: unverified. */
	g = f;
	g.filter_sha256[0] = g.filter_sha256[0] == 'a' ? 'b' : 'a';
	ck_assert(!sbx_doctor_verified(state, &g));
	g = f;
	snprintf(g.corral_version, sizeof g.corral_version, "9.9.9");
	ck_assert(!sbx_doctor_verified(state, &g));
	g = f;
	snprintf(g.kernel, sizeof g.kernel, "Linux 1.0");
	ck_assert(!sbx_doctor_verified(state, &g));
	g = f;
	g.bwrap_sha256[0] = '\0';
	ck_assert_int_eq(sbx_doctor_mark_verified(state, &g), -EINVAL);
	ck_assert(!sbx_doctor_verified(NULL, &f));
	sbx_policy_free(p);
	cu_rmrf(state);
	free(state);
}
END_TEST

/* Fail closed: what cannot be checked halts. */
START_TEST(test_doctor_fails_closed)
{
	struct sbx_policy *p = sbx_policy_new_default();
	struct sbx_doctor_opts o;
	struct sbx_doctor_report r;
	struct st_lease l;
	const struct sbx_doctor_check *c;

	st_lease_init(&l, "doctor-closed");
	opts_init(&o, &l, p, l.ws);
	free((char *)o.probe_path);
	o.probe_path = strdup("/nonexistent/corral-sbx-probe");
	ck_assert_int_eq(sbx_doctor_run(&o, &r), SBX_EPROBE);
	ck_assert_int_eq(r.halt, SBX_HALT_ISOLATION_UNSATISFIABLE);
	c = find_check(&r, "seccomp");
	ck_assert_ptr_nonnull(c);
	ck_assert(!c->ok);
	o.uid = 0;
	ck_assert_int_eq(sbx_doctor_run(&o, &r), -EINVAL);
	/* What a run makes needs an owner: no state directory, no run. */
	o.uid = l.uid;
	o.state_dir = NULL;
	ck_assert_int_eq(sbx_doctor_run(&o, &r), -EINVAL);
	opts_fini(&o);
	sbx_policy_free(p);
	st_lease_fini(&l);
}
END_TEST

/*
 * The probe sees a zone without the filter: the same agent-zone plan with
 * `--seccomp` cut from its options lets TIOCSTI and vsock through, and
 * the mark then shows on the host's side of the terminal. So a missing
 * filter cannot pass the doctor unnoticed.
 */
START_TEST(test_doctor_probe_sees_no_filter)
{
	struct sbx_mount mnt;
	struct sbx_request req;
	struct sbx_plan *p = NULL;
	struct sbx_exec_opts eo = { 1 << 16, 20000, -1 };
	struct sbx_exec_result res;
	struct st_lease l;
	struct sbx_data *d;
	char *init = st_helper("corral-sbx-init");
	char *probe = st_helper("corral-sbx-probe");
	char *stage = cu_tmpdir("doctor-stage"), *pin, *iin, *buf, acc[4096];
	char *cmd[] = { SBX_PROBE_IN, "--inject", "MARK-no-filter-7q", NULL };
	size_t alen = 0, len = 0;
	int master, slave;
	ssize_t n;

	st_lease_init(&l, "doctor-nofilter");
	ck_assert_int_eq(chmod(stage, 0755), 0);
	ck_assert_int_gt(asprintf(&pin, "%s/probe", stage), 0);
	ck_assert_int_gt(asprintf(&iin, "%s/init", stage), 0);
	buf = cu_read_file(probe, &len);
	ck_assert_int_eq(cu_write_file(pin, buf, len), 0);
	free(buf);
	buf = cu_read_file(init, &len);
	ck_assert_int_eq(cu_write_file(iin, buf, len), 0);
	free(buf);
	ck_assert_int_eq(chmod(pin, 0755), 0);
	ck_assert_int_eq(chmod(iin, 0755), 0);
	mnt.src = pin;
	mnt.dst = SBX_PROBE_IN;
	memset(&req, 0, sizeof req);
	req.workspace = l.ws;
	req.cmd = cmd;
	req.init_path = iin;
	req.uid = l.uid;
	req.gid = l.gid;
	req.ro_binds = &mnt;
	req.nro_binds = 1;
	ck_assert_int_eq(sbx_adapter_bwrap.plan(&req, &p), 0);
	/* Cut "--seccomp 7" (the last two options) from the --args data. */
	d = (struct sbx_data *)sbx_plan_data_find(p, SBX_BWRAP_ARGS_FD);
	ck_assert_ptr_nonnull(d);
	ck_assert_int_gt(d->len, 13);
	ck_assert_mem_eq(d->bytes + d->len - 12, "--seccomp\0" "7\0", 12);
	d->len -= 12;
	ck_assert_int_eq(openpty(&master, &slave, NULL, NULL, NULL), 0);
	eo.stdin_fd = slave;
	ck_assert_int_eq(sbx_exec_run(p, &eo, &res), 0);
	close(slave);
	while ((n = read(master, acc + alen, sizeof acc - 1 - alen)) > 0)
		alen += (size_t)n;
	acc[alen] = '\0';
	close(master);
	ck_assert_msg(strstr(res.out, "tiocsti ok") != NULL, "%s", res.out);
	ck_assert_msg(strstr(res.out, "vsock EPERM") == NULL, "%s", res.out);
	ck_assert_msg(strstr(res.out, "io_uring_setup EPERM") == NULL, "%s",
	    res.out);
	/* The host reads the injected mark back from the terminal. */
	ck_assert_msg(strstr(acc, "MARK-no-filter-7q") != NULL, "[%s]", acc);
	sbx_exec_result_clear(&res);
	sbx_plan_free(p);
	cu_rmrf(stage);
	free(stage);
	free(pin);
	free(iin);
	free(init);
	free(probe);
	st_lease_fini(&l);
}
END_TEST

/*
 * Bad bwrap (SPEC 8.7, issue "bad input"): missing, setuid, too old. Each
 * is staged in a private mount namespace of a child (the host's bwrap is
 * never touched): a named halt, isolation_unsatisfiable, exit class 30.
 */
static int
bad_bwrap_child(int which, const char *stage, char *why, size_t whysz)
{
	struct sbx_doctor_opts o;
	struct sbx_doctor_report r;
	char path[512];
	int rc;

	if (unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -1;
	switch (which) {
	case 0:	/* missing: an empty /usr/bin */
		rc = mount("none", "/usr/bin", "tmpfs", 0, "size=64k");
		break;
	case 1:	/* setuid */
		snprintf(path, sizeof path, "%s/bwrap-suid", stage);
		rc = mount(path, SBX_BWRAP_PATH, NULL, MS_BIND, NULL);
		break;
	default: /* 0.7 */
		snprintf(path, sizeof path, "%s/bwrap-old", stage);
		rc = mount(path, SBX_BWRAP_PATH, NULL, MS_BIND, NULL);
		break;
	}
	if (rc < 0)
		return -2;
	memset(&o, 0, sizeof o);
	o.quick = true;
	o.state_dir = stage;
	o.policy = sbx_policy_new_default();
	rc = sbx_doctor_run(&o, &r);
	sbx_policy_free((struct sbx_policy *)o.policy);
	snprintf(why, whysz, "%s", r.detail);
	return rc == SBX_EPROBE ? r.halt : -3;
}

START_TEST(test_doctor_bad_bwrap)
{
	static const char *const want[] = { "No such file", "setuid",
		"older than 0.8.0" };
	char *stage = cu_tmpdir("doctor-bwrap"), *suid, *old, *buf;
	size_t len = 0;

	ck_assert_int_gt(asprintf(&suid, "%s/bwrap-suid", stage), 0);
	ck_assert_int_gt(asprintf(&old, "%s/bwrap-old", stage), 0);
	buf = cu_read_file(SBX_BWRAP_PATH, &len);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(cu_write_file(suid, buf, len), 0);
	ck_assert_int_eq(chmod(suid, 04755), 0);
	free(buf);
	ck_assert_int_eq(cu_write_file(old,
	    "#!/bin/sh\necho bubblewrap 0.7.1\n", 32), 0);
	ck_assert_int_eq(chmod(old, 0755), 0);
	for (int which = 0; which < 3; which++) {
		int pp[2], st;
		char why[512];
		pid_t pid;
		ssize_t n;

		ck_assert_int_eq(pipe(pp), 0);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			int halt;

			close(pp[0]);
			halt = bad_bwrap_child(which, stage, why, sizeof why);
			if (write(pp[1], why, strlen(why) + 1) < 0)
				_exit(255);
			_exit(halt < 0 ? 200 - halt : halt);
		}
		close(pp[1]);
		n = read(pp[0], why, sizeof why - 1);
		why[n > 0 ? n : 0] = '\0';
		close(pp[0]);
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert(WIFEXITED(st));
		ck_assert_msg(WEXITSTATUS(st) ==
		    SBX_HALT_ISOLATION_UNSATISFIABLE, "case %d: exit %d (%s)", which, WEXITSTATUS(st), why);
		ck_assert_msg(strstr(why, want[which]) != NULL, "case %d: %s",
		    which, why);
		ck_assert_ptr_nonnull(strstr(why, "bwrap"));
	}
	/* The host's bwrap is as it was. */
	{
		char w[256];

		ck_assert_int_eq(sbx_adapter_bwrap.probe(w, sizeof w), 0);
	}
	free(suid);
	free(old);
	cu_rmrf(stage);
	free(stage);
}
END_TEST

Suite *
doctor_suite(void)
{
	Suite *s = suite_create("doctor");
	TCase *tc = tcase_create("Core");
	TCase *ti = tcase_create("Integration");

	tcase_add_test(tc, test_doctor_policy_halts);
	tcase_add_test(tc, test_doctor_policy_symlink);
	tcase_add_test(tc, test_doctor_policy_state_dir);
	tcase_add_test(tc, test_doctor_reclaim);
	tcase_add_test(tc, test_doctor_marker);
	tcase_set_timeout(ti, 60);
	tcase_add_test(ti, test_doctor_host_passes);
	tcase_add_test(ti, test_doctor_fails_closed);
	tcase_add_test(ti, test_doctor_probe_sees_no_filter);
	tcase_add_test(ti, test_doctor_bad_bwrap);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, ti);
	return s;
}
