/* test_chat_template.c — chat templates recognised and one user turn rendered (chat_template.h):
 *   - tests/data/chat_template_cases.tsv (chat_template_cases.py): templates rendered by jinja2
 *     itself, with Hugging Face's settings, for user texts with Chinese, a newline, tabs, a
 *     ChatML marker and nothing; the rendering must be byte for byte jinja2's, and the
 *     templates the script marks unsupported (other families, ChatML with branches, indented
 *     output) must be refused, not guessed;
 *   - hand cases: no template (text unchanged), a buffer too small, malformed template text;
 *   - with SmolLM2-135M-Instruct present: its own template from the GGUF file, and the ids of
 *     wrapped texts against llama.cpp's llama-tokenize (tests/data/chat_template_ids.tsv). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chat_template.h"
#include "drift.h"
#include "gguf.h"
#include "gguf_build.h"
#include "tokenizer.h"

#define CASES DRIFT_SOURCE_DIR "/tests/data/chat_template_cases.tsv"
#define IDS DRIFT_SOURCE_DIR "/tests/data/chat_template_ids.tsv"
#define SMOLLM2 DRIFT_SOURCE_DIR "/models/SmolLM2-135M-Instruct.Q4_1.gguf"
#define SMOLLM2_LEAD \
    "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"

/* The TSV fields' escapes (\n \t \r \\), in place. */
static char *unesc(char *s)
{
    char *o = s;
    for (const char *p = s; *p; p++) {
        if (*p != '\\') {
            *o++ = *p;
            continue;
        }
        p++;
        *o++ = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p == 'r' ? '\r' : *p;
    }
    *o = 0;
    return s;
}

/* Split line at tabs into at most max fields. */
static int fields(char *line, char **f, int max)
{
    int n = 0;
    line[strcspn(line, "\n")] = 0;
    for (char *s = line; n < max;) {
        f[n++] = s;
        char *t = strchr(s, '\t');
        if (!t) break;
        *t = 0, s = t + 1;
    }
    return n;
}

#define MAX_T 32
static struct {
    char name[64];
    drift_chat_template_t t;
    int ok;
} g_t[MAX_T];
static int g_nt;

Test(chat_template, renders_as_jinja2)
{
    FILE *fp = fopen(CASES, "r");
    cr_assert(fp, "cannot open %s", CASES);
    static char line[1 << 16];
    int rows = 0, supported = 0, refused = 0;
    char err[256];
    while (fgets(line, sizeof line, fp)) {
        char *f[4];
        if (line[0] == '#' || fields(line, f, 4) != 4) continue;
        if (!strcmp(f[0], "T")) {
            cr_assert_lt(g_nt, MAX_T);
            snprintf(g_t[g_nt].name, sizeof g_t[g_nt].name, "%s", f[1]);
            unesc(f[3]);
            err[0] = 0;
            int rc = drift_chat_template_parse(&g_t[g_nt].t, f[3], strlen(f[3]), err, sizeof err);
            if (!strcmp(f[2], "chatml")) {
                cr_expect_eq(rc, 0, "%s: %s", f[1], err);
                cr_expect_eq(g_t[g_nt].t.family, DRIFT_CHAT_CHATML, "%s", f[1]);
                supported++;
            } else {
                cr_expect_eq(rc, DRIFT_EUNSUPPORTED, "%s: %d", f[1], rc);
                cr_expect(err[0] && !strchr(err, '\n'), "%s: one line: '%s'", f[1], err);
                refused++;
            }
            g_t[g_nt++].ok = rc == 0;
        } else if (!strcmp(f[0], "R")) {
            int k = 0;
            while (k < g_nt && strcmp(g_t[k].name, f[1])) k++;
            cr_assert_lt(k, g_nt, "row for an unknown template %s", f[1]);
            if (!g_t[k].ok) continue; /* reported above */
            unesc(f[2]), unesc(f[3]);
            static char out[1 << 16];
            size_t len = 0;
            cr_assert_eq(drift_chat_wrap(out, sizeof out, &g_t[k].t, f[2], &len, err, sizeof err), 0, "%s", err);
            cr_expect_str_eq(out, f[3], "%s, user '%s'", f[1], f[2]);
            cr_expect_eq(len, strlen(f[3]));
            rows++;
        }
    }
    fclose(fp);
    /* the file's own counts: 4 supported templates x 7 user texts, 6 refused */
    cr_expect_eq(supported, 4);
    cr_expect_eq(refused, 6);
    cr_expect_eq(rows, 28);
}

Test(chat_template, no_template_leaves_the_text)
{
    char err[128], out[64];
    drift_chat_template_t t;
    cr_assert_eq(drift_chat_template_parse(&t, NULL, 0, err, sizeof err), 0);
    cr_expect_eq(t.family, DRIFT_CHAT_NONE);
    cr_expect_eq(drift_chat_wrap(out, sizeof out, &t, "Once upon a time", NULL, err, sizeof err), 0);
    cr_expect_str_eq(out, "Once upon a time");
    /* a GGUF file without tokenizer.chat_template: unchanged, and said so */
    gguf_build_t b;
    gb_init(&b);
    gb_kv_str(&b, "general.architecture", "llama");
    size_t size;
    uint8_t *file = gb_finish(&b, &size);
    drift_gguf_t g;
    cr_assert_eq(drift_gguf_parse(&g, file, size, err, sizeof err), 0, "%s", err);
    int wrapped = -1;
    cr_expect_eq(drift_chat_wrap_gguf(out, sizeof out, &g, "hi\n", &wrapped, err, sizeof err), 0);
    cr_expect_eq(wrapped, 0);
    cr_expect_str_eq(out, "hi\n");
    drift_gguf_close(&g);
    free(file);
    gb_free(&b);
    /* one that is not a string: refused naming the key */
    gb_init(&b);
    gb_kv_u32(&b, "tokenizer.chat_template", 7);
    file = gb_finish(&b, &size);
    cr_assert_eq(drift_gguf_parse(&g, file, size, err, sizeof err), 0, "%s", err);
    cr_expect_eq(drift_chat_wrap_gguf(out, sizeof out, &g, "hi", &wrapped, err, sizeof err), DRIFT_EINVAL);
    cr_expect(strstr(err, "tokenizer.chat_template"), "%s", err);
    cr_expect_eq(wrapped, 0);
    drift_gguf_close(&g);
    free(file);
    gb_free(&b);
}

Test(chat_template, small_buffer_and_bad_text)
{
    static const char chatml[] =
        "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
        "'<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";
    char err[256], out[64];
    drift_chat_template_t t;
    cr_assert_eq(drift_chat_template_parse(&t, chatml, strlen(chatml), err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(t.lead, "");
    /* "<|im_start|>user\n" 12 + 4 + 1 = 17, "ab" 2, "<|im_end|>\n<|im_start|>assistant\n" 10 + 1 + 12 + 9 + 1 = 33:
     * 52 bytes, 53 with the NUL */
    size_t len = 0;
    cr_expect_eq(drift_chat_wrap(out, 52, &t, "ab", &len, err, sizeof err), DRIFT_ERANGE);
    cr_expect_eq(len, 52u);
    cr_expect_str_eq(out, "");
    cr_expect_eq(drift_chat_wrap(out, 53, &t, "ab", &len, err, sizeof err), 0);
    cr_expect_str_eq(out, "<|im_start|>user\nab<|im_end|>\n<|im_start|>assistant\n");
    static const struct {
        const char *tmpl;
        int rc;
    } bad[] = {
        {"{{ 'unterminated }}", DRIFT_EINVAL},
        {"{% for message in messages %", DRIFT_EINVAL},
        {"{# a comment never closed", DRIFT_EINVAL},
        {"{{ '\\x41' }}", DRIFT_EUNSUPPORTED}, /* an escape Jinja decodes and this reader does not */
        {"", DRIFT_EUNSUPPORTED},              /* an empty template renders nothing: no shape */
        {"<|im_start|>user\n", DRIFT_EUNSUPPORTED},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        cr_expect_eq(
            drift_chat_template_parse(&t, bad[i].tmpl, strlen(bad[i].tmpl), err, sizeof err), bad[i].rc, "case %zu", i);
        cr_expect(err[0] && !strchr(err, '\n'), "case %zu: one line: '%s'", i, err);
        cr_expect_eq(t.family, DRIFT_CHAT_NONE, "case %zu", i);
    }
}

Test(chat_template, smollm2_as_llama_cpp_tokenizes_it)
{
    FILE *fp = fopen(SMOLLM2, "rb");
    if (!fp) cr_skip_test("skipped: %s is absent (./lab models get smollm2-135m)", SMOLLM2);
    fclose(fp);
    char err[256];
    drift_gguf_t g;
    drift_tokenizer_t tz;
    drift_chat_template_t t;
    cr_assert_eq(drift_gguf_open(&g, SMOLLM2, err, sizeof err), 0, "%s", err);
    cr_assert_eq(drift_tokenizer_from_gguf(&tz, &g, err, sizeof err), 0, "%s", err);
    cr_assert_eq(drift_chat_template_from_gguf(&t, &g, err, sizeof err), 0, "%s", err);
    cr_expect_eq(t.family, DRIFT_CHAT_CHATML);
    cr_expect_str_eq(t.lead, SMOLLM2_LEAD); /* the GGUF's template text, read with the gguf package */
    fp = fopen(IDS, "r");
    cr_assert(fp, "cannot open %s", IDS);
    static char line[1 << 16];
    int rows = 0;
    while (fgets(line, sizeof line, fp)) {
        char *f[2];
        if (line[0] == '#' || fields(line, f, 2) != 2) continue;
        unesc(f[0]);
        static char text[1 << 14];
        int wrapped = 0, ids[1024], n = 0, want[1024], nw = 0;
        cr_assert_eq(drift_chat_wrap_gguf(text, sizeof text, &g, f[0], &wrapped, err, sizeof err), 0, "%s", err);
        cr_expect_eq(wrapped, 1);
        cr_assert_eq(drift_tokenizer_encode_ex(&tz, text, 1, 1, ids, 1024, &n), 0);
        for (char *s = strtok(f[1], " "); s && nw < 1024; s = strtok(NULL, " ")) want[nw++] = atoi(s);
        cr_expect_eq(n, nw, "'%s': %d ids, llama.cpp %d", f[0], n, nw);
        for (int i = 0; i < n && i < nw; i++) cr_expect_eq(ids[i], want[i], "'%s': id %d", f[0], i);
        rows++;
    }
    fclose(fp);
    cr_expect_eq(rows, 32); /* 7 user texts of the cases file + every 24th of the 585 lab prompts */
    drift_tokenizer_free(&tz);
    drift_gguf_close(&g);
}
