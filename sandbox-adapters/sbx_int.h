/*
 * sbx_int.h: declarations shared between files of sandbox-adapters/ that
 * are not part of the module's public interface (sbx.h).
 */
#ifndef CORRAL_SBX_INT_H
#define CORRAL_SBX_INT_H

#include <stdbool.h>
#include <stddef.h>

/* sbx_bwrap.c: "X.Y.Z" from `bwrap --version` into buf. 0 or -errno. */
int sbx__bwrap_version(char *buf, size_t sz);

struct sbx_request;
struct sbx_steps;
struct sbx_resource;
struct sbx_provisioned;
/* sbx_bwrap_host.c: the bwrap adapter's .provision, .teardown, .list. */
int sbx__bwrap_host_provision(const struct sbx_request *, const struct sbx_steps *,
    struct sbx_provisioned *, char *err, size_t errsz);
int sbx__bwrap_host_teardown(const struct sbx_request *,
    const struct sbx_resource *, size_t, const struct sbx_steps *, char *err,
    size_t errsz);
int sbx__bwrap_host_list(const struct sbx_request *, char ***ids, char *err,
    size_t errsz);

/* sbx_strv.c: a and b (sorted, unique) merged into *out. 0, -ENOMEM. */
int sbx__strv_union(char *const *a, char *const *b, char ***out);

/*
 * sbx_policy.c: what the narrowing check and the canonical form share with
 * the parser: the key table, the parse with the line each key was set on.
 */
struct sbx_policy;
struct sbx_policy_error;
struct sbx__policy_parse;

enum sbx__policy_ktype {
	SBX_PK_DURATION,	/* seconds; s, m, h, d */
	SBX_PK_BYTES,	/* bytes; K, M, G, T */
	SBX_PK_COUNT,	/* a positive integer */
	SBX_PK_CPU,		/* cores, up to 3 decimals */
	SBX_PK_BOOL,
	SBX_PK_PORT,		/* 0..65535 */
	SBX_PK_EGRESS,	/* fail | record */
	SBX_PK_NET,		/* list of host:port */
	SBX_PK_ENV,		/* list of names */
	SBX_PK_MOUNTS,	/* list of absolute paths */
	SBX_PK_RELDIR,	/* one relative directory (char array) */
};

struct sbx__policy_key {
	const char *section;
	const char *name;
	enum sbx__policy_ktype type;
	size_t off;	/* scalars: offset in struct sbx_policy */
	bool zero_ok;
};

/* The key table, in the order of the canonical form; *n its length. */
const struct sbx__policy_key *sbx__policy_keys(size_t *n);
/*
 * Parse text over p (modified in place), as sbx_policy_load does, keeping
 * in *out (always set; sbx__policy_parse_free) the line each key was set
 * on. 0, SBX_EPOLICY (err says where), -ENOMEM.
 */
int sbx__policy_parse(struct sbx_policy *p, const char *text,
    const char *name, struct sbx_policy_error *err,
    struct sbx__policy_parse **out);
/*
 * The line key (an index in the table) was set on, or for key == its
 * length, the line of the check named check; 0 if not set.
 */
int sbx__policy_parse_line(const struct sbx__policy_parse *, size_t key,
    const char *check);
void sbx__policy_parse_free(struct sbx__policy_parse *);
/* The policy's string lists: push a copy, NULL-terminated; membership. */
int sbx__policy_vec_push(char ***v, size_t *n, const char *s);
bool sbx__policy_vec_has(char *const *v, size_t n, const char *s);
/* Fill err (NULL: nothing) with file ("policy" if NULL), line and text. */
void sbx__policy_errf(struct sbx_policy_error *err, const char *file,
    int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif /* CORRAL_SBX_INT_H */
