/*
 * sbx_adapters.c: the table of built-in sandbox adapters (SPEC 8.1), in the
 * tmux cmd_table style. The only global of the module, and it is const.
 */
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

const struct sbx_adapter *
sbx_adapters_exec(const char *name)
{
	const struct sbx_adapter *ad = name != NULL ?
	    sbx_adapters_find(name) : NULL;

	if (ad != NULL && ad->exec != NULL)
		return ad;
	for (size_t i = 0; sbx_adapters[i] != NULL; i++) {
		if (sbx_adapters[i]->exec != NULL)
			return sbx_adapters[i];
	}
	return NULL;
}
