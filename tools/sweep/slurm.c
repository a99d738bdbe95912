/* slurm.c — a sweep as a Slurm job array: one task per share (SLURM_ARRAY_TASK_ID is the share),
 * and a merge job that starts only when every task succeeded (--dependency=afterok). drift-sweep
 * writes the scripts and runs nothing: the cluster's own scheduler is the engine. Each script
 * also runs by hand (SLURM_ARRAY_TASK_ID=3 bash shares.sbatch), which is how the test checks it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sweep.h"

/* A path or word single-quoted for bash. */
static void q(FILE *fp, const char *s)
{
    fputc('\'', fp);
    for (; *s; s++) {
        if (*s == '\'')
            fputs("'\\''", fp);
        else
            fputc(*s, fp);
    }
    fputc('\'', fp);
}

static FILE *open_script(char *path, size_t size, const char *dir, const char *name)
{
    snprintf(path, size, "%s/slurm/%s", dir, name);
    FILE *fp = fopen(path, "w");
    if (!fp) sweep_die("--slurm: cannot write '%s'", path);
    return fp;
}

static void close_script(FILE *fp, const char *path)
{
    if (ferror(fp) | fclose(fp)) sweep_die("--slurm: cannot write '%s'", path);
    chmod(path, 0755);
}

static int has_control(const char *p)
{
    for (; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) return 1;
    return 0;
}

void sweep_write_slurm(const sweep_t *s, const sweep_ctx_t *c, const char *self_exe, char **extra, int nextra)
{
    /* A newline in a path or an #SBATCH option would end a script line early, and what
     * follows it would run as a command of its own. */
    if (has_control(c->dir))
        sweep_die("--slurm: the sweep directory's path holds a control byte (a script line would break)");
    if (has_control(self_exe) || has_control(c->bindir))
        sweep_die("--slurm: drift-sweep's path holds a control byte (a script line would break)");
    for (int i = 0; i < nextra; i++)
        if (has_control(extra[i]))
            sweep_die("--sbatch: '%s' holds a control byte (accepted: one #SBATCH option)", extra[i]);
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/slurm", c->dir);
    sweep_mkdirs(dir);

    FILE *fp = open_script(path, sizeof path, c->dir, "shares.sbatch");
    fprintf(fp, "#!/bin/bash\n");
    fprintf(fp, "# driftlab sweep %s: one Slurm array task per share (SLURM_ARRAY_TASK_ID -> --shard I/%ld).\n",
        s->experiment, s->nshares);
    fprintf(fp, "# Submit everything with: bash %s/slurm/submit.sh\n", c->dir);
    fprintf(fp, "# Run share I here, without Slurm: SLURM_ARRAY_TASK_ID=I bash %s\n", path);
    fprintf(fp, "#SBATCH --job-name=drift-%s\n", s->experiment);
    fprintf(fp, "#SBATCH --array=0-%ld\n", s->nshares - 1);
    fprintf(fp, "#SBATCH --output=%s/logs/slurm-%%A_%%a.out\n", c->dir);
    for (int i = 0; i < nextra; i++) fprintf(fp, "#SBATCH %s\n", extra[i]);
    fprintf(fp, "set -euo pipefail\n");
    fprintf(fp, ": \"${SLURM_ARRAY_TASK_ID:?submit with sbatch, or set SLURM_ARRAY_TASK_ID to the share}\"\n");
    fprintf(fp, "exec ");
    q(fp, self_exe);
    fprintf(fp, " %s --file ", s->experiment);
    char def[4200];
    snprintf(def, sizeof def, "%s/sweep.txt", c->dir);
    q(fp, def);
    fprintf(fp, " --out ");
    q(fp, c->dir);
    fprintf(fp, " --bin ");
    q(fp, c->bindir);
    fprintf(fp, " --shard \"$SLURM_ARRAY_TASK_ID/%ld\"\n", s->nshares);
    close_script(fp, path);

    fp = open_script(path, sizeof path, c->dir, "merge.sbatch");
    fprintf(fp, "#!/bin/bash\n");
    fprintf(
        fp, "# driftlab sweep %s: merges the %ld shares once every array task succeeded.\n", s->experiment, s->nshares);
    fprintf(fp, "#SBATCH --job-name=drift-%s-merge\n", s->experiment);
    fprintf(fp, "#SBATCH --output=%s/logs/slurm-merge-%%j.out\n", c->dir);
    for (int i = 0; i < nextra; i++) fprintf(fp, "#SBATCH %s\n", extra[i]);
    fprintf(fp, "set -euo pipefail\nexec ");
    q(fp, self_exe);
    fprintf(fp, " --merge ");
    q(fp, c->dir);
    fprintf(fp, "\n");
    close_script(fp, path);

    fp = open_script(path, sizeof path, c->dir, "submit.sh");
    fprintf(fp,
        "#!/bin/bash\n# Submits the share array, then the merge that waits for all of it (afterok).\nset -euo pipefail\n");
    fprintf(fp, "jid=$(sbatch --parsable ");
    snprintf(def, sizeof def, "%s/slurm/shares.sbatch", c->dir);
    q(fp, def);
    fprintf(fp, ")\njid=${jid%%%%;*}\nmid=$(sbatch --parsable --dependency=afterok:\"$jid\" ");
    snprintf(def, sizeof def, "%s/slurm/merge.sbatch", c->dir);
    q(fp, def);
    fprintf(fp, ")\necho \"submitted array job $jid (%ld shares) and merge job ${mid%%%%;*}\"\n", s->nshares);
    close_script(fp, path);
}
