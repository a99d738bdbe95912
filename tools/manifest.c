/* drift-manifest — is a directory of results one complete run? (lib/run/manifest.h)
 *
 *   drift-manifest check DIR [EXP]     exit 0 when every experiment's set in DIR (or EXP's) has
 *                                      no interrupted commit and matches its manifest, else one
 *                                      line naming the file and exit 1
 *   drift-manifest recover DIR [EXP]   completes interrupted commits and removes what dead
 *                                      runs left (their staging directories, and F.tmp.<pid>
 *                                      for the files F its manifest or journal names), holding
 *                                      the experiment's lock on DIR (lib/run/outlock.h)
 * A bad EXP (an empty name once made recover remove every *.tmp.<dead pid> in DIR) or a DIR
 * that cannot be read: one line, exit 2.
 * Readers (./lab plot, tools/report.sh) run recover, then check, and refuse a set that fails. */
#include "manifest.h"
#include "drift.h"
#include "escape.h"
#include "output.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

static int usage(void)
{
    fprintf(stderr, "usage: drift-manifest check|recover DIR [EXPERIMENT]\n");
    return 2;
}

/* Experiments with a set (or a pending commit) in dir: "<exp>.manifest", ".<exp>.commit". */
static int list_sets(char names[][96], int max, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *s = e->d_name;
        size_t len = strlen(s), ms = strlen(DRIFT_MANIFEST_SUFFIX);
        char name[96];
        if (len > ms && !strcmp(s + len - ms, DRIFT_MANIFEST_SUFFIX) && len - ms < sizeof name)
            snprintf(name, sizeof name, "%.*s", (int)(len - ms), s);
        else if (s[0] == '.' && len > 8 && !strcmp(s + len - 7, ".commit") && len - 8 < sizeof name)
            snprintf(name, sizeof name, "%.*s", (int)(len - 8), s + 1);
        else
            continue;
        if (!drift_manifest_name_ok(name)) continue; /* not a set of the lab's */
        int dup = 0;
        for (int i = 0; i < n; i++) dup |= !strcmp(names[i], name);
        if (dup) continue;
        if (n == max) { /* never a silent pass over the sets beyond the table */
            closedir(d);
            return -2;
        }
        snprintf(names[n++], 96, "%s", name);
    }
    closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--version")) {
        printf("drift-manifest (driftlab %s)\n", DRIFT_VERSION);
        return drift_stdout_close_check();
    }
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: drift-manifest check|recover DIR [EXPERIMENT]\n");
        return drift_stdout_close_check();
    }
    if (argc < 3 || argc > 4) return usage();
    int check = !strcmp(argv[1], "check");
    if (!check && strcmp(argv[1], "recover")) return usage();
    const char *dir = argv[2];
    if (strlen(dir) > 1024) { /* the library's limit too: no path built from DIR may be cut */
        fprintf(stderr, "drift-manifest: DIR: path too long (%zu characters; accepted: at most 1024)\n", strlen(dir));
        return 2;
    }
    char names[256][96];
    int n = 1;
    if (argc == 4) {
        if (!drift_manifest_name_ok(argv[3])) {
            fprintf(stderr,
                "drift-manifest: EXPERIMENT: '%s' is not an experiment name (accepted: letters, digits, '_', '-', starting with a letter)\n",
                argv[3]);
            return 2;
        }
        snprintf(names[0], sizeof names[0], "%s", argv[3]);
    } else if ((n = list_sets(names, 256, dir)) < 0) {
        fprintf(stderr, "drift-manifest: ");
        drift_escape_fputs(stderr, dir, NULL);
        fprintf(stderr,
            n == -2 ? ": more than 256 sets (name the experiment: drift-manifest %s DIR EXP)\n"
                    : ": cannot read the directory\n",
            argv[1]);
        return 2;
    } else if (n == 0 && check) {
        fprintf(stderr, "drift-manifest: ");
        drift_escape_fputs(stderr, dir, NULL);
        fprintf(stderr, ": no manifest (not a run of the lab)\n");
        return 1;
    }
    char why[4096];
    for (int i = 0; i < n; i++) {
        int rc = check ? drift_manifest_check(why, sizeof why, dir, names[i])
                       : drift_manifest_recover(why, sizeof why, dir, names[i]);
        if (rc) { /* one line, whatever the paths in it hold */
            fprintf(stderr, "drift-manifest: ");
            drift_escape_fputs(stderr, why, NULL);
            fputc('\n', stderr);
            return 1;
        }
    }
    return drift_stdout_close_check();
}
