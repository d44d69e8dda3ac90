/*
 * main.c: the corral entry point: the command word through the command
 * table (cli/cmd.c). A lease's holder is its own program, corral-holder
 * (runtime/main/corral_holder.c). Kept small on purpose (STYLE I.1).
 */
#include "tui/cli/cli.h"

int main(int, char **);

int
main(int argc, char **argv)
{
	return tui_cmd_main(argc, argv);
}
