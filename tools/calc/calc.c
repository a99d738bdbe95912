/* drift-calc — the probe calculator: try your own numbers, check the library from outside.
 * `./lab calc SUBCOMMAND ...`; each subcommand prints CSV to stdout. */
#include <stdio.h>
#include <string.h>

#include "calc.h"
#include "cli.h"
#include "drift.h"

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
    {"gaps", calc_gaps, "gaps LOGITS"},
    {"errlaw", calc_errlaw, "errlaw --format F [--units U] EXACT COMPUTED"},
    {"forecast", calc_forecast, "forecast (--pair ID [--data DIR] | --law L --scale S --pi P) [--tokens T] DUMP"},
    {"cards", calc_cards, "cards"},
    {"env", calc_env, "env"},
};
#define NCOMMANDS (int)(sizeof COMMANDS / sizeof COMMANDS[0])

static void usage(FILE *to)
{
    fprintf(to, "usage: drift-calc COMMAND [options]   (options as --option VALUE or --option=VALUE)\ncommands:\n");
    for (int i = 0; i < NCOMMANDS; i++) fprintf(to, "  %s\n", COMMANDS[i].usage);
    fprintf(to, "  help\n'drift-calc COMMAND --help' describes one; --version prints the version\n");
}

int main(int argc, char **argv)
{
    drift_set_program("drift-calc");
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("drift-calc (driftlab %s)\n", DRIFT_VERSION);
        return 0;
    }
    const char *names[NCOMMANDS + 1];
    char accepted[256] = "";
    for (int i = 0; i < NCOMMANDS; i++) {
        names[i] = COMMANDS[i].name;
        size_t l = strlen(accepted);
        snprintf(accepted + l, sizeof accepted - l, "%s, ", names[i]);
        if (!strcmp(argv[1], COMMANDS[i].name)) {
            char prog[64];
            snprintf(prog, sizeof prog, "drift-calc %s", COMMANDS[i].name);
            drift_set_program(prog);
            return COMMANDS[i].run(argc - 1, argv + 1);
        }
    }
    names[NCOMMANDS] = "help";
    char hint[96];
    drift_suggest_text(hint, sizeof hint, argv[1], names, NCOMMANDS + 1, NULL);
    drift_die("unknown command '%s' (%saccepted: %shelp)", argv[1], hint, accepted);
}
