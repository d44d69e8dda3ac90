/*
 * main.c: the corral entry point: parse the command word and dispatch to
 * the command table (tui/cmd.c). Kept small on purpose (STYLE I.1).
 */
#include "tui/tui.h"

int main(int, char **);

int
main(int argc, char **argv)
{
	return tui_cmd_main(argc, argv);
}
