/* test_registry.c — one source for each text: every experiment of experiments/registry.tsv
 * states its question in its program (`<exp> --describe`), and README.md's experiment table
 * and docs/experiments.md must carry exactly that text (tools/registry_docs.sh writes them). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

/* 1 when text holds line as a whole line. */
static int has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = strstr(text, line); p; p = strstr(p + 1, line))
        if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == 0)) return 1;
    return 0;
}

Test(registry, readme_and_docs_state_each_programs_question)
{
    char *reg = slurp(DRIFT_SOURCE_DIR "/experiments/registry.tsv");
    char *readme = slurp(DRIFT_SOURCE_DIR "/README.md");
    char *docs = slurp(DRIFT_SOURCE_DIR "/docs/experiments.md");
    cr_assert(reg && readme && docs);
    int n = 0;
    for (char *line = strtok(reg, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#' || !line[0]) continue;
        char *tab = strchr(line, '\t');
        cr_assert(tab, "registry line without a tab: '%s'", line);
        *tab = 0;
        const char *name = line, *title = tab + 1;
        char *needs = strchr(tab + 1, '\t'); /* column 3: what the experiment needs ("gpu") */
        if (needs) *needs = 0;
        char cmd[512], out[4096], want[4200];
        snprintf(cmd, sizeof cmd, "%s/%s --describe", DRIFT_BIN_DIR, name);
        cr_assert_eq(run_stdout(cmd, out, sizeof out), 0, "%s", cmd);
        char *q = strchr(out, '\t');
        cr_assert(q, "%s: --describe prints name<TAB>question<TAB>summary", name);
        *q++ = 0;
        cr_assert_str_eq(out, name);
        char *end = strchr(q, '\t');
        cr_assert(end, "%s: --describe prints name<TAB>question<TAB>summary", name);
        *end = 0;
        snprintf(want, sizeof want, "| `%s` | %s |", name, q);
        cr_assert(has_line(readme, want), "README.md lacks the row '%s' (run tools/registry_docs.sh)", want);
        snprintf(want, sizeof want, "## %s — %s", name, title);
        const char *sec = strstr(docs, want);
        cr_assert(sec, "docs/experiments.md lacks the section '%s'", want);
        snprintf(want, sizeof want, "\n\n**Question.** %s\n", q);
        const char *next = strstr(sec + 3, "\n## ");
        const char *found = strstr(sec, want);
        cr_assert(found && (!next || found < next),
            "docs/experiments.md, section %s: the first paragraph must be "
            "'**Question.** %s' (run tools/registry_docs.sh)",
            name, q);
        n++;
    }
    cr_assert_geq(n, 6, "the six experiments are registered");
}
