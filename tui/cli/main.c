/*
 * main.c: the corral entry point: a lease's holder process (`corral
 * __holder`, runtime/holder_main.c) first, else the command word through
 * the command table (cli/cmd.c). Kept small on purpose (STYLE I.1).
 */
#include <string.h>

#include "tui/cli/cli.h"
#include "tui/runtime/runtime.h"

int main(int, char **);

int
main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "__holder") == 0)
		return tui_holder_main_run(argc, argv);
	return tui_cmd_main(argc, argv);
}
