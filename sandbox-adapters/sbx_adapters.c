/*
 * sbx_adapters.c: the table of built-in sandbox adapters (SPEC 8.1), in the
 * tmux cmd_table style. The only global of the module, and it is const.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"

const struct sbx_adapter *const sbx_adapters[] = {
	&sbx_adapter_bwrap,
	&sbx_adapter_local,
	&sbx_adapter_command,
	NULL,
};

const struct sbx_adapter *
sbx_adapters_find(const char *name)
{
	for (size_t i = 0; sbx_adapters[i] != NULL; i++) {
		if (strcmp(sbx_adapters[i]->name, name) == 0)
			return sbx_adapters[i];
	}
	return NULL;
}

int
sbx__strv_union(char *const *a, char *const *b, char ***out)
{
	size_t na = 0, nb = 0, i = 0, j = 0, k = 0;
	char **v;

	while (a != NULL && a[na] != NULL)
		na++;
	while (b != NULL && b[nb] != NULL)
		nb++;
	if ((v = calloc(na + nb + 1, sizeof *v)) == NULL)
		return -ENOMEM;
	while (i < na || j < nb) {
		const char *next;
		int c = i >= na ? 1 : j >= nb ? -1 : strcmp(a[i], b[j]);

		next = c <= 0 ? a[i] : b[j];
		if (c <= 0)
			i++;
		if (c >= 0)
			j++;
		if (k > 0 && strcmp(v[k - 1], next) == 0)
			continue;
		if ((v[k++] = strdup(next)) == NULL) {
			sbx_strv_free(v);
			return -ENOMEM;
		}
	}
	*out = v;
	return 0;
}
