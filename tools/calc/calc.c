/* drift-calc — the probe calculator: try your own numbers, check the library from outside.
 * `./lab calc SUBCOMMAND ...`; each subcommand prints CSV to stdout. */
#include <stdio.h>
#include <string.h>

#include "calc.h"
#include "cli.h"

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *usage;
} COMMANDS[] = {
    {"round", calc_round, "round --format F [--mode M] [--subnormals keep|flush] [--overflow inf|saturate] VALUE..."},
    {"sum", calc_sum, "sum --format F --order SPEC [--acc A] FILE|-"},
    {"dot", calc_dot, "dot --format F --order SPEC [--acc A] [--fma|--nofma] [--c C] FILE_A FILE_B"},
    {"exact", calc_exact, "exact FILE|-"},
    {"argmax", calc_argmax, "argmax --format F --order SPEC [--acc A] [--logits L] FILE_H FILE_W"},
    {"env", calc_env, "env"},
};
#define NCOMMANDS (int)(sizeof COMMANDS / sizeof COMMANDS[0])

static void usage(FILE *to)
{
    fprintf(to, "usage: drift-calc COMMAND [options]\ncommands:\n");
    for (int i = 0; i < NCOMMANDS; i++) fprintf(to, "  %s\n", COMMANDS[i].usage);
}

int main(int argc, char **argv)
{
    drift_set_program("drift-calc");
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    for (int i = 0; i < NCOMMANDS; i++)
        if (!strcmp(argv[1], COMMANDS[i].name)) {
            char prog[64];
            snprintf(prog, sizeof prog, "drift-calc %s", COMMANDS[i].name);
            drift_set_program(prog);
            return COMMANDS[i].run(argc - 1, argv + 1);
        }
    fprintf(stderr, "drift-calc: unknown command '%s' (accepted: round, sum, dot, exact, argmax, env)\n", argv[1]);
    return 2;
}
