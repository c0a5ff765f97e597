/* cli_main_renamed.c: the tool's real main() compiled as posenc_cli_main so
 * that fuzz_cli can call the whole command line front end in-process. */
int posenc_cli_main(int argc, char **argv);
#define main posenc_cli_main
#define POSENC_CLI_IN_PROCESS 1 /* main.c must not close stdout */
#include "../cli/main.c"
