/*
 * sbx_strv.c: the NULL-terminated string vectors the module's
 * list-returning functions hand out (lease IDs, paths), and their sorted
 * union.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox-adapters/sbx.h"
#include "sandbox-adapters/sbx_int.h"

void
sbx_strv_free(char **v)
{
	if (v == NULL)
		return;
	for (char **s = v; *s != NULL; s++)
		free(*s);
	free(v);
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
