/* test_layers.c — the library's layers only look down (core <- ops <- llm <- run).
 *
 * The build enforces it: each layer's headers are on the include path of that layer and the
 * ones above only, so lib/core/x.c including "lmhead.h" fails to compile (checked by hand when
 * the layers were made: "fatal error: lmhead.h: No such file or directory"). A relative include
 * ("../llm/lmhead.h") would dodge the include path, so this test refuses any include with a
 * slash in lib/, and any include of cuda/ from lib/. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>

static const char *layers[] = {"core", "ops", "llm", "run"};

Test(layers, lib_includes_are_bare_names)
{
    int files = 0;
    for (size_t l = 0; l < sizeof layers / sizeof *layers; l++) {
        char dir[1200];
        snprintf(dir, sizeof dir, "%s/lib/%s", DRIFT_SOURCE_DIR, layers[l]);
        DIR *d = opendir(dir);
        cr_assert(d, "cannot open %s", dir);
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t n = strlen(e->d_name);
            if (n < 3 || e->d_name[n - 2] != '.' || (e->d_name[n - 1] != 'c' && e->d_name[n - 1] != 'h')) continue;
            char path[2400], line[1024];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            FILE *fp = fopen(path, "r");
            cr_assert(fp, "cannot read %s", path);
            files++;
            for (int ln = 1; fgets(line, sizeof line, fp); ln++) {
                const char *p = line;
                while (*p == ' ' || *p == '\t') p++;
                if (strncmp(p, "#include \"", 10)) continue;
                const char *name = p + 10, *end = strchr(name, '"');
                cr_assert(end, "%s:%d: unterminated include", path, ln);
                cr_expect(!memchr(name, '/', (size_t)(end - name)),
                    "%s:%d: include with a path (%.*s): name the header bare so the layers hold", path, ln,
                    (int)(end - name), name);
            }
            fclose(fp);
        }
        closedir(d);
    }
    cr_assert(files > 20, "only %d library files found", files);
}
