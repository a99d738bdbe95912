/* die.c — a program's one way out: its name (drift_set_program) and one line on stderr, exit 2
 * (drift_die, drift_die_oom). Library code never calls these; programs and the kit do. */
#include "cli.h"
#include "drift.h"
#include "output.h"
#include "why.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char program[96] = "drift";

void drift_set_program(const char *name)
{
    snprintf(program, sizeof program, "%s", name);
    /* Every program names itself first: from here on its stdout is checked at exit (a --help,
     * --version or calc answer to a full device exited 0 or 1 without a word). Registered
     * before any other handler, so that it runs last, after them. */
    drift_stdout_check_at_exit();
}

const char *drift_program(void) { return program; }

static void (*die_hook)(void);

void drift_set_die_hook(void (*hook)(void)) { die_hook = hook; }

noreturn void drift_die(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", program);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (die_hook) die_hook(); /* a fuzz target's longjmp: it does not return here */
    exit(2);
}

noreturn void drift_die_oom(double bytes, const char *fmt, ...)
{
    char what[256], why[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    drift_why_oom(why, sizeof why, bytes, "%s", what);
    drift_die("%s", why);
}
