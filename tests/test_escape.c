/* test_escape.c — one value per line in the lab's line-oriented files (lib/run/escape.h).
 *   - known answers, written by hand from the rule (control bytes, DEL, backslash and each byte
 *     of an invalid UTF-8 sequence as \xHH; valid UTF-8 and everything else as is);
 *   - unescape(escape(x)) == x for every single byte 1..255, for all of them in one string, and
 *     for 20000 random byte strings; the unescape refuses what the escape never writes;
 *   - end to end: a run whose argv holds every byte 1..255 (its --out, with a newline in it, the
 *     argument that once jammed a directory) commits, passes drift-manifest check, and both
 *     its manifest and its CSV header give that argv back word for word; a run with nothing to
 *     escape writes its header lines as before. */
#include "support.h"

#include "escape.h"
#include "manifest.h"

#define BIN DRIFT_BIN_DIR

typedef struct {
    const char *in, *also, *out;
} esc_case_t;

static const esc_case_t CASES[] = {
    {"plain text, 1.5e-3 [x]", NULL, "plain text, 1.5e-3 [x]"}, /* nothing to escape: unchanged */
    {"a\nb", NULL, "a\\x0ab"},
    {"\r\t\x01\x1f\x7f", NULL, "\\x0d\\x09\\x01\\x1f\\x7f"},
    {"C:\\dir", NULL, "C:\\x5cdir"}, /* the backslash itself */
    {"caf\xc3\xa9 \xe2\x89\xa4 \xf0\x9f\x99\x82", NULL,
        "caf\xc3\xa9 \xe2\x89\xa4 \xf0\x9f\x99\x82"},   /* é ≤ 🙂: valid */
    {"\xc3", NULL, "\\xc3"},                            /* cut sequence */
    {"\x80x", NULL, "\\x80x"},                          /* stray continuation byte */
    {"\xc0\xaf", NULL, "\\xc0\\xaf"},                   /* overlong '/' */
    {"\xe0\x80\xaf", NULL, "\\xe0\\x80\\xaf"},          /* overlong, 3 bytes */
    {"\xed\xa0\x80", NULL, "\\xed\\xa0\\x80"},          /* surrogate U+D800 */
    {"\xf4\x90\x80\x80", NULL, "\\xf4\\x90\\x80\\x80"}, /* beyond U+10FFFF */
    {"\xf4\x8f\xbf\xbf", NULL, "\xf4\x8f\xbf\xbf"},     /* U+10FFFF itself is valid */
    {"\xff\xfe", NULL, "\\xff\\xfe"},
    {"a b", " ", "a\\x20b"}, /* the argv line's separator */
    {"", NULL, ""},
};

Test(escape, known_answers)
{
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        char out[256], back[256];
        size_t n = drift_escape(out, sizeof out, CASES[i].in, CASES[i].also);
        cr_expect_str_eq(out, CASES[i].out, "case %zu", i);
        cr_expect_eq(n, strlen(CASES[i].out), "case %zu: length", i);
        cr_expect_eq(drift_unescape(back, sizeof back, out, strlen(out), CASES[i].also), (long)strlen(CASES[i].in),
            "case %zu", i);
        cr_expect_str_eq(back, CASES[i].in, "case %zu: round trip", i);
    }
    /* cut output is NUL-terminated and the needed length is still returned */
    char small[4];
    cr_expect_eq(drift_escape(small, sizeof small, "\n\n", NULL), 8u);
    cr_expect_str_eq(small, "\\x0");
}

Test(escape, unescape_refuses_what_escape_never_writes)
{
    static const char *const BAD[] = {"\\", "\\x", "\\x0", "\\x00", "\\X0a", "\\x0A", "\\n", "\\x61", "a\nb", "a\tb",
        "\x80", "\xc3", "\xed\xa0\x80", "a\\x5", "\x7f"};
    char out[64];
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++)
        cr_expect_lt(drift_unescape(out, sizeof out, BAD[i], strlen(BAD[i]), NULL), 0, "accepted '%s'", BAD[i]);
    cr_expect_lt(drift_unescape(out, sizeof out, "a b", 3, " "), 0, "a raw blank where blanks are escaped");
    cr_expect_lt(drift_unescape(out, 3, "abc", 3, NULL), 0, "too small a buffer");
}

Test(escape, every_byte_and_random_strings_round_trip)
{
    char all[256], esc[1100], back[300];
    for (int b = 1; b < 256; b++) {
        char one[2] = {(char)b, 0};
        drift_escape(esc, sizeof esc, one, " ");
        cr_assert(!strchr(esc, '\n') && !strchr(esc, ' '), "byte %d escaped to a separator", b);
        cr_assert_eq(drift_unescape(back, sizeof back, esc, strlen(esc), " "), 1, "byte %d", b);
        cr_assert_eq((unsigned char)back[0], b, "byte %d", b);
        all[b - 1] = (char)b;
    }
    all[255] = 0;
    size_t n = drift_escape(esc, sizeof esc, all, NULL);
    cr_assert_lt(n, sizeof esc);
    cr_assert_eq(drift_unescape(back, sizeof back, esc, n, NULL), 255);
    cr_assert(!memcmp(back, all, 256));
    drift_stream_t rng;
    drift_stream_init(&rng, 7, 0, 0, 0);
    for (int t = 0; t < 20000; t++) {
        char in[40];
        int len = (int)(drift_stream_u32(&rng) % 39);
        for (int i = 0; i < len; i++) in[i] = (char)(1 + drift_stream_u32(&rng) % 255);
        in[len] = 0;
        size_t m = drift_escape(esc, sizeof esc, in, " ");
        cr_assert_eq(drift_unescape(back, sizeof back, esc, m, " "), len, "trial %d", t);
        cr_assert(!memcmp(back, in, (size_t)len + 1), "trial %d", t);
    }
}

Test(escape, argv_words_round_trip)
{
    const char *argv[] = {"prog", "", "a b", "--x", "\\", "two  blanks", ""};
    char path[] = "/tmp/drift_argv_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *fp = fdopen(fd, "w+");
    cr_assert_eq(drift_argv_fputs(fp, 7, argv), 0);
    fflush(fp);
    rewind(fp);
    char line[512];
    cr_assert(fgets(line, sizeof line, fp));
    fclose(fp);
    remove(path);
    cr_expect_str_eq(line, " prog  a\\x20b --x \\x5c two\\x20\\x20blanks ");
    char *words[16];
    int n = drift_argv_parse(words, 16, line);
    cr_assert_eq(n, 7);
    for (int i = 0; i < n; i++) {
        cr_expect_str_eq(words[i], argv[i], "word %d", i);
        free(words[i]);
    }
    cr_expect_eq(drift_argv_parse(words, 16, ""), 0);
    cr_expect_lt(drift_argv_parse(words, 16, "x"), 0, "no blank before the first word");
    cr_expect_lt(drift_argv_parse(words, 2, " a b c"), 0, "more words than room");
}

static char dir[64];
static void make_dir(void) { tmpdir_make(dir, sizeof dir, "drift_esc"); }
static void remove_dir(void) { tmpdir_remove(dir); }

/* The words of the "# argv:" line of a CSV, as drift_argv_parse reads them back. */
static int csv_argv(char **words, int max, const char *path)
{
    char *text = slurp(path);
    char *line = strstr(text, "\n# argv:");
    cr_assert(line, "%s has no argv line", path);
    line += 8;
    *strchr(line, '\n') = 0;
    int n = drift_argv_parse(words, max, line);
    free(text);
    return n;
}

Test(escape, a_run_with_every_byte_in_its_argv_commits_and_reads_back, .init = make_dir, .fini = remove_dir,
    .timeout = 120)
{
    /* --out <dir>/<bytes 1..255>: the '/' in the middle is a directory of its own */
    char out[512];
    int n = snprintf(out, sizeof out, "%s/", dir);
    for (int b = 1; b < 256; b++) out[n++] = (char)b;
    out[n] = 0;
    const char *args[] = {BIN "/formats", "--profile", "quick", "--quiet", "--seed", "3", "--out", out, NULL};
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        freopen("/dev/null", "w", stderr);
        execv(args[0], (char *const *)args);
        _exit(127);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the run failed: status %d", st);

    char why[4096], path[1024];
    cr_assert_eq(drift_manifest_check(why, sizeof why, out, "formats"), 0, "%s", why);
    char *words[16];
    snprintf(path, sizeof path, "%s/formats.manifest", out);
    int k = drift_manifest_argv(words, 16, path);
    cr_assert_eq(k, 8, "manifest argv: %d words", k);
    cr_expect_str_eq(words[0], "formats", "the program's name, not its path");
    for (int i = 1; i < 8; i++) cr_expect_str_eq(words[i], args[i], "manifest word %d", i);
    for (int i = 0; i < k; i++) free(words[i]);
    snprintf(path, sizeof path, "%s/formats.csv", out);
    k = csv_argv(words, 16, path);
    cr_assert_eq(k, 8, "csv argv: %d words", k);
    for (int i = 1; i < 8; i++) cr_expect_str_eq(words[i], args[i], "csv word %d", i);
    for (int i = 0; i < k; i++) free(words[i]);
    /* the next run into the same directory is not jammed */
    pid = fork();
    if (pid == 0) {
        freopen("/dev/null", "w", stderr);
        execv(args[0], (char *const *)args);
        _exit(127);
    }
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the second run failed: status %d", st);
}

/* Nothing to escape, nothing changed: the header of a plain run is the text the writer wrote
 * before escaping existed, line for line (the reference is formed here from the options the
 * run was given, not from the code under test). */
Test(escape, plain_header_lines_are_unchanged, .init = make_dir, .fini = remove_dir, .timeout = 60)
{
    cr_assert_eq(sh("cd '%s' && '%s/formats' --profile quick --quiet --seed 5 --out .", dir, BIN), 0);
    char path[256];
    snprintf(path, sizeof path, "%s/formats.csv", dir);
    char *text = slurp(path);
    cr_expect(strstr(text, "\n# argv: formats --profile quick --quiet --seed 5 --out .\n"), "argv line changed");
    cr_expect(strstr(text, "# experiment: formats\n") == text, "experiment line changed");
    cr_expect(strstr(text, "\n# seed: 5\n# profile: quick\n"), "seed/profile lines changed");
    free(text);
    snprintf(path, sizeof path, "%s/formats.manifest", dir);
    text = slurp(path);
    cr_expect(strstr(text, "\nargv: formats --profile quick --quiet --seed 5 --out .\n"), "manifest argv changed");
    free(text);
}
