/*
 * gss_none.c: the GSSAPI that libgit2.a names, for corral-holder alone.
 * libgit2 calls it only to answer an HTTP server's Negotiate (Kerberos)
 * challenge while it talks to a remote; a holder reads the lease's own
 * repositories and never reaches one. Linking the real library would load
 * Kerberos into every live holder (~200 kB each, tui/CMakeLists.txt), so
 * these refuse: such a challenge fails as if no Kerberos were set up. The
 * types follow RFC 2744's C bindings, opaque here.
 */
#include <stddef.h>
#include <stdint.h>

typedef uint32_t OM_uint32;
struct gss_buffer_desc_struct {
	size_t length;
	void *value;
};
typedef struct gss_buffer_desc_struct *gss_buffer_t;
typedef void *gss_OID;		/* opaque: never read here */
typedef void *gss_OID_set;
typedef void *gss_name_t;
typedef void *gss_ctx_id_t;
typedef void *gss_cred_id_t;
typedef void *gss_channel_bindings_t;

/* RFC 2744 3.9.1: GSS_S_FAILURE, a routine error. */
#define GSS_NONE_FAILURE (13u << 16)

gss_OID GSS_C_NT_HOSTBASED_SERVICE = NULL;

OM_uint32 gss_display_status(OM_uint32 *, OM_uint32, int, gss_OID,
    OM_uint32 *, gss_buffer_t);
OM_uint32 gss_release_buffer(OM_uint32 *, gss_buffer_t);
OM_uint32 gss_delete_sec_context(OM_uint32 *, gss_ctx_id_t *, gss_buffer_t);
OM_uint32 gss_import_name(OM_uint32 *, gss_buffer_t, gss_OID, gss_name_t *);
OM_uint32 gss_release_name(OM_uint32 *, gss_name_t *);
OM_uint32 gss_init_sec_context(OM_uint32 *, gss_cred_id_t, gss_ctx_id_t *,
    gss_name_t, gss_OID, OM_uint32, OM_uint32, gss_channel_bindings_t,
    gss_buffer_t, gss_OID *, gss_buffer_t, OM_uint32 *, OM_uint32 *);
OM_uint32 gss_indicate_mechs(OM_uint32 *, gss_OID_set *);
OM_uint32 gss_release_oid_set(OM_uint32 *, gss_OID_set *);

static void
empty(gss_buffer_t b)
{
	if (b != NULL) {
		b->length = 0;
		b->value = NULL;
	}
}

OM_uint32
gss_display_status(OM_uint32 *minor, OM_uint32 status, int type,
    gss_OID mech, OM_uint32 *ctx, gss_buffer_t out)
{
	(void)status, (void)type, (void)mech;
	if (minor != NULL)
		*minor = 0;
	if (ctx != NULL)
		*ctx = 0;
	empty(out);
	return GSS_NONE_FAILURE;
}

OM_uint32
gss_release_buffer(OM_uint32 *minor, gss_buffer_t b)
{
	if (minor != NULL)
		*minor = 0;
	empty(b);
	return 0;
}

OM_uint32
gss_delete_sec_context(OM_uint32 *minor, gss_ctx_id_t *ctx, gss_buffer_t out)
{
	if (minor != NULL)
		*minor = 0;
	if (ctx != NULL)
		*ctx = NULL;
	empty(out);
	return 0;
}

OM_uint32
gss_import_name(OM_uint32 *minor, gss_buffer_t in, gss_OID type,
    gss_name_t *out)
{
	(void)in, (void)type;
	if (minor != NULL)
		*minor = 0;
	if (out != NULL)
		*out = NULL;
	return GSS_NONE_FAILURE;
}

OM_uint32
gss_release_name(OM_uint32 *minor, gss_name_t *name)
{
	if (minor != NULL)
		*minor = 0;
	if (name != NULL)
		*name = NULL;
	return 0;
}

OM_uint32
gss_init_sec_context(OM_uint32 *minor, gss_cred_id_t cred,
    gss_ctx_id_t *ctx, gss_name_t target, gss_OID mech, OM_uint32 flags,
    OM_uint32 time, gss_channel_bindings_t cb, gss_buffer_t in,
    gss_OID *actual, gss_buffer_t out, OM_uint32 *ret_flags,
    OM_uint32 *time_rec)
{
	(void)cred, (void)ctx, (void)target, (void)mech, (void)flags;
	(void)time, (void)cb, (void)in;
	if (minor != NULL)
		*minor = 0;
	if (actual != NULL)
		*actual = NULL;
	if (ret_flags != NULL)
		*ret_flags = 0;
	if (time_rec != NULL)
		*time_rec = 0;
	empty(out);
	return GSS_NONE_FAILURE;
}

OM_uint32
gss_indicate_mechs(OM_uint32 *minor, gss_OID_set *set)
{
	if (minor != NULL)
		*minor = 0;
	if (set != NULL)
		*set = NULL;
	return GSS_NONE_FAILURE;
}

OM_uint32
gss_release_oid_set(OM_uint32 *minor, gss_OID_set *set)
{
	if (minor != NULL)
		*minor = 0;
	if (set != NULL)
		*set = NULL;
	return 0;
}
