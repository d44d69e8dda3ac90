/*
 * sbx_policy_env.c: the policy's environment allowlist applied to the
 * owner's environment (SPEC 8.6), and the credential-shaped names no
 * allowlist may pass (*_TOKEN, *SECRET*, AWS_*, SSH_AUTH_SOCK, ...). Pure.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"

static bool
ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a >= b && strcmp(s + a - b, suf) == 0;
}

bool
sbx_policy_env_credential_shaped(const char *name)
{
	return sbx__env_shaped(name, true);
}

bool
sbx__env_shaped(const char *name, bool vendor)
{
	static const char *const exact[] = { "SSH_AUTH_SOCK", "SSH_AGENT_PID",
		"GPG_AGENT_INFO", "KRB5CCNAME", "DOCKER_HOST", "DOCKER_CONFIG",
		"DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS", "NETRC",
		"GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "KUBECONFIG" };
	static const char *const suffix[] = { "TOKEN", "TOKENS", "_KEY",
		"_KEYS", "APIKEY", "_PAT", "_COOKIE", "_COOKIES" };
	static const char *const infix[] = { "SECRET", "PASSWORD", "PASSWD",
		"CREDENTIAL", "API_KEY", "PRIVATE_KEY", "ACCESS_KEY" };
	static const char *const prefix[] = { "AWS_", "AZURE_", "GOOGLE_",
		"GCLOUD_", "OPENAI_", "ANTHROPIC_" };
	char up[256];
	size_t n;

	if (name == NULL || (n = strlen(name)) == 0 || n >= sizeof up)
		return true;
	for (size_t i = 0; i <= n; i++)
		up[i] = (char)toupper((unsigned char)name[i]);
	for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++) {
		if (strcmp(up, exact[i]) == 0)
			return true;
	}
	for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
		if (ends_with(up, suffix[i]))
			return true;
	}
	for (size_t i = 0; i < sizeof infix / sizeof infix[0]; i++) {
		if (strstr(up, infix[i]) != NULL)
			return true;
	}
	for (size_t i = 0; vendor && i < sizeof prefix / sizeof prefix[0]; i++) {
		if (strncmp(up, prefix[i], strlen(prefix[i])) == 0)
			return true;
	}
	return false;
}

int
sbx_policy_env(const struct sbx_policy *p, char *const *environ,
    char ***out)
{
	char **v = NULL;
	size_t n = 0;

	if (p == NULL || out == NULL)
		return -EINVAL;
	if ((v = calloc(1, sizeof *v)) == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < p->nenv_allow; i++) {
		const char *name = p->env_allow[i];
		size_t len = strlen(name);

		if (sbx_policy_env_credential_shaped(name))
			continue;
		for (size_t j = 0; environ != NULL && environ[j] != NULL;
		    j++) {
			if (strncmp(environ[j], name, len) != 0 ||
			    environ[j][len] != '=')
				continue;
			if (sbx__policy_vec_push(&v, &n, environ[j]) < 0) {
				sbx_strv_free(v);
				return -ENOMEM;
			}
			break;
		}
	}
	*out = v;
	return 0;
}
