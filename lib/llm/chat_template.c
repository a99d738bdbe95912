/* chat_template.c — chat templates recognised by shape, one user turn rendered (chat_template.h). */
#include "chat_template.h"

#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "why.h"

/* ---- the lexer: template text -> tokens ---------------------------------------------------- */
enum { TK_TEXT, TK_STR, TK_NAME, TK_NUM, TK_OP };

typedef struct {
    int type;
    char *s; /* the token's bytes (a string: its value, escapes decoded), NUL-terminated */
    size_t n;
} tok_t;

typedef struct {
    tok_t *v;
    int n, cap;
} toks_t;

static void toks_free(toks_t *t)
{
    for (int i = 0; i < t->n; i++) free(t->v[i].s);
    free(t->v);
    memset(t, 0, sizeof *t);
}

static int push(toks_t *t, int type, const char *s, size_t n)
{
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 64;
        tok_t *v = realloc(t->v, (size_t)cap * sizeof *v);
        if (!v) return DRIFT_ENOMEM;
        t->v = v, t->cap = cap;
    }
    char *c = malloc(n + 1);
    if (!c) return DRIFT_ENOMEM;
    if (n) memcpy(c, s, n);
    c[n] = 0;
    t->v[t->n++] = (tok_t){type, c, n};
    return 0;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
static int is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* A string literal at s[*i] (the quote); its value into a token. Jinja decodes Python's
 * escapes; the common ones are decoded here, \x \u \N and octal ones are refused. */
static int lex_string(toks_t *t, const char *s, size_t len, size_t *i, char *err, size_t errsz)
{
    char q = s[*i];
    char *v = malloc(len - *i + 1);
    if (!v) return drift_why(err, errsz, DRIFT_ENOMEM, "chat template: out of memory");
    size_t n = 0, p = *i + 1;
    for (; p < len && s[p] != q; p++) {
        if (s[p] != '\\') {
            v[n++] = s[p];
            continue;
        }
        if (++p == len) break;
        switch (s[p]) {
        case 'n': v[n++] = '\n'; break;
        case 't': v[n++] = '\t'; break;
        case 'r': v[n++] = '\r'; break;
        case '\\':
        case '\'':
        case '"': v[n++] = s[p]; break;
        case 'x':
        case 'u':
        case 'U':
        case 'N':
        case '0':
        case '1':
        case '2':
        case '3':
        case '4':
        case '5':
        case '6':
        case '7':
            free(v);
            return drift_why(
                err, errsz, DRIFT_EUNSUPPORTED, "chat template: the string escape '\\%c' is not modelled", s[p]);
        default: v[n++] = '\\', v[n++] = s[p]; break; /* Python keeps an unknown escape as it is */
        }
    }
    if (p >= len) {
        free(v);
        return drift_why(
            err, errsz, DRIFT_EINVAL, "chat template: a string literal at byte %zu has no closing quote", *i);
    }
    int rc = push(t, TK_STR, v, n);
    free(v);
    *i = p + 1;
    return rc ? drift_why(err, errsz, rc, "chat template: out of memory") : 0;
}

static const char *const k_ops2[] = {"==", "!=", "<=", ">=", "//", "**"};

/* The tokens inside a tag from s[*i] up to its closer ("}}" or "%}"), the closer included;
 * *trim: the closer was "-}}" / "-%}". */
static int lex_tag(
    toks_t *t, const char *s, size_t len, size_t *i, const char *closer, int *trim, char *err, size_t errsz)
{
    size_t p = *i;
    for (;;) {
        while (p < len && is_space(s[p])) p++;
        if (p + 1 >= len)
            return drift_why(err, errsz, DRIFT_EINVAL, "chat template: a tag opened before byte %zu is not closed", *i);
        int dash = s[p] == '-' && p + 2 < len && s[p + 1] == closer[0] && s[p + 2] == closer[1];
        if (dash || (s[p] == closer[0] && s[p + 1] == closer[1])) {
            *trim = dash;
            *i = p + 2 + (size_t)dash;
            return push(t, TK_OP, closer, 2) ? drift_why(err, errsz, DRIFT_ENOMEM, "chat template: out of memory") : 0;
        }
        int rc = 0;
        size_t q = p;
        if (s[p] == '\'' || s[p] == '"') {
            rc = lex_string(t, s, len, &p, err, errsz);
            if (rc) return rc;
            continue;
        } else if (is_alpha(s[p])) {
            while (q < len && (is_alpha(s[q]) || is_digit(s[q]))) q++;
            rc = push(t, TK_NAME, s + p, q - p);
        } else if (is_digit(s[p])) {
            while (q < len && (is_digit(s[q]) || s[q] == '.')) q++;
            rc = push(t, TK_NUM, s + p, q - p);
        } else {
            q = p + 1;
            for (size_t k = 0; k < sizeof k_ops2 / sizeof k_ops2[0]; k++)
                if (s[p] == k_ops2[k][0] && s[p + 1] == k_ops2[k][1]) q = p + 2;
            rc = push(t, TK_OP, s + p, q - p);
        }
        if (rc) return drift_why(err, errsz, DRIFT_ENOMEM, "chat template: out of memory");
        p = q;
    }
}

/* Hugging Face renders templates with trim_blocks and lstrip_blocks: the first newline after a
 * block or comment tag is dropped, and spaces and tabs from a line's start up to one are too. */
static int lex(toks_t *t, const char *s, size_t len, char *err, size_t errsz)
{
    size_t i = 0;
    int trim_next = 0, drop_newline = 0;
    while (i < len) {
        size_t j = i;
        while (j + 1 < len && !(s[j] == '{' && (s[j + 1] == '{' || s[j + 1] == '%' || s[j + 1] == '#'))) j++;
        if (j + 1 >= len) j = len;
        size_t a = i, b = j;
        if (drop_newline && a < b && s[a] == '\n') a++;
        if (trim_next)
            while (a < b && is_space(s[a])) a++;
        char kind = j < len ? s[j + 1] : 0, mark = j + 2 < len ? s[j + 2] : 0;
        if (kind && mark == '-') {
            while (b > a && is_space(s[b - 1])) b--;
        } else if ((kind == '%' || kind == '#') && mark != '+') {
            size_t k = b;
            while (k > a && (s[k - 1] == ' ' || s[k - 1] == '\t')) k--;
            if (k == 0 || s[k - 1] == '\n') b = k;
        }
        if (b > a && push(t, TK_TEXT, s + a, b - a))
            return drift_why(err, errsz, DRIFT_ENOMEM, "chat template: out of memory");
        if (j >= len) break;
        size_t p = j + 2 + (mark == '-' || mark == '+');
        if (kind == '#') {
            const char *e = NULL;
            for (size_t k = p; k + 1 < len && !e; k++)
                if (s[k] == '#' && s[k + 1] == '}') e = s + k;
            if (!e) return drift_why(err, errsz, DRIFT_EINVAL, "chat template: a comment at byte %zu is not closed", j);
            trim_next = e > s + p && e[-1] == '-';
            drop_newline = 1;
            i = (size_t)(e - s) + 2;
            continue;
        }
        if (push(t, TK_OP, kind == '{' ? "{{" : "{%", 2))
            return drift_why(err, errsz, DRIFT_ENOMEM, "chat template: out of memory");
        int rc = lex_tag(t, s, len, &p, kind == '{' ? "}}" : "%}", &trim_next, err, errsz);
        if (rc) return rc;
        drop_newline = kind == '%';
        i = p;
    }
    return 0;
}

/* ---- normalisation: spellings Jinja renders alike ------------------------------------------ */
static int is_op(const tok_t *k, const char *op) { return k->type == TK_OP && !strcmp(k->s, op); }

static int is_ident(const tok_t *k)
{
    if (k->type != TK_STR || !k->n || !is_alpha(k->s[0])) return 0;
    for (size_t i = 0; i < k->n; i++)
        if (!is_alpha(k->s[i]) && !is_digit(k->s[i])) return 0;
    return 1;
}

static void drop(toks_t *t, int at, int count)
{
    for (int i = at; i < at + count; i++) free(t->v[i].s);
    memmove(t->v + at, t->v + at + count, (size_t)(t->n - at - count) * sizeof *t->v);
    t->n -= count;
}

static int normalise(toks_t *t)
{
    /* x['k'] is x.k */
    for (int i = 1; i + 2 < t->n; i++) {
        tok_t *v = t->v;
        if (is_op(&v[i], "[") && is_ident(&v[i + 1]) && is_op(&v[i + 2], "]") &&
            (v[i - 1].type == TK_NAME || is_op(&v[i - 1], "]") || is_op(&v[i - 1], ")"))) {
            v[i].s[0] = '.';
            v[i + 1].type = TK_NAME;
            drop(t, i + 2, 1);
        }
    }
    /* 'a' + 'b' is 'ab' where nothing binds either operand tighter than + */
    static const char *const before[] = {"+", "~", "{{", "(", ",", "="}, *const after[] = {
                                                                             "+", "~", "}}", "%}", ")", ","};
    for (int i = 1; i + 3 < t->n; i++) {
        tok_t *v = t->v;
        if (v[i].type != TK_STR || !is_op(&v[i + 1], "+") || v[i + 2].type != TK_STR) continue;
        int ok_before = 0, ok_after = 0;
        for (size_t k = 0; k < sizeof before / sizeof before[0]; k++) ok_before |= is_op(&v[i - 1], before[k]);
        for (size_t k = 0; k < sizeof after / sizeof after[0]; k++) ok_after |= is_op(&v[i + 3], after[k]);
        if (!ok_before || !ok_after) continue;
        char *c = realloc(v[i].s, v[i].n + v[i + 2].n + 1);
        if (!c) return DRIFT_ENOMEM;
        memcpy(c + v[i].n, v[i + 2].s, v[i + 2].n + 1);
        v[i].s = c, v[i].n += v[i + 2].n;
        drop(t, i + 1, 2);
        i--; /* the joined string may join the next one */
    }
    return 0;
}

/* ---- the shapes known ---------------------------------------------------------------------- */
#define HOLE "\x01" /* in a pattern's string: any text there (the default system prompt) */

typedef struct {
    const char *name;
    const char *tmpl; /* written as Jinja, lexed and normalised like the template */
    int has_lead;
} shape_t;

static const shape_t k_shapes[] = {
    {"ChatML with a default system turn",
        "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
        "{{ '<|im_start|>system\n" HOLE "<|im_end|>\n' }}{% endif %}"
        "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}{% endfor %}"
        "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}",
        1},
    {"ChatML",
        "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}{% endfor %}"
        "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}",
        0},
};

/* 1 when template tokens t match pattern tokens s; *lead: the template's string in the hole's place. */
static int matches(const toks_t *t, const toks_t *s, const tok_t **lead)
{
    if (t->n != s->n) return 0;
    *lead = NULL;
    for (int i = 0; i < t->n; i++) {
        const tok_t *a = &t->v[i], *b = &s->v[i];
        if (a->type != b->type) return 0;
        const char *h = b->type == TK_STR ? memchr(b->s, HOLE[0], b->n) : NULL;
        if (!h) {
            if (a->n != b->n || memcmp(a->s, b->s, a->n)) return 0;
            continue;
        }
        size_t pre = (size_t)(h - b->s), suf = b->n - pre - 1;
        if (a->n < pre + suf || memcmp(a->s, b->s, pre) || memcmp(a->s + a->n - suf, h + 1, suf)) return 0;
        *lead = a;
    }
    return 1;
}

static int tokens_of(toks_t *t, const char *s, size_t len, char *err, size_t errsz)
{
    memset(t, 0, sizeof *t);
    int rc = lex(t, s, len, err, errsz);
    if (!rc && normalise(t)) rc = drift_why(err, errsz, DRIFT_ENOMEM, "chat template: out of memory");
    if (rc) toks_free(t);
    return rc;
}

static const char *resembles(const char *s, size_t len)
{
    static const char *const marks[][2] = {{"<|im_start|>", "ChatML-like"}, {"<|start_header_id|>", "Llama-3-like"},
        {"<start_of_turn>", "Gemma-like"}, {"[INST]", "Llama-2/Mistral-like"}, {"<|user|>", "Zephyr/Phi-like"}};
    for (size_t k = 0; k < sizeof marks / sizeof marks[0]; k++) {
        size_t m = strlen(marks[k][0]);
        for (size_t i = 0; i + m <= len; i++)
            if (!memcmp(s + i, marks[k][0], m)) return marks[k][1];
    }
    return "unknown";
}

int drift_chat_template_parse(drift_chat_template_t *t, const char *tmpl, size_t len, char *err, size_t errsz)
{
    if (!t) return drift_why(err, errsz, DRIFT_EINVAL, "chat template: no output");
    memset(t, 0, sizeof *t);
    if (!tmpl) return 0;
    toks_t tt;
    int rc = tokens_of(&tt, tmpl, len, err, errsz);
    if (rc) return rc;
    for (size_t k = 0; k < sizeof k_shapes / sizeof k_shapes[0]; k++) {
        toks_t st;
        rc = tokens_of(&st, k_shapes[k].tmpl, strlen(k_shapes[k].tmpl), err, errsz);
        if (rc) break;
        const tok_t *lead = NULL;
        int hit = matches(&tt, &st, &lead);
        toks_free(&st);
        if (!hit) continue;
        if (lead && lead->n >= sizeof t->lead) {
            rc = drift_why(err, errsz, DRIFT_ERANGE, "chat template: default system turn of %zu bytes, at most %zu",
                lead->n, sizeof t->lead - 1);
            break;
        }
        if (lead && memchr(lead->s, 0, lead->n)) {
            rc = drift_why(err, errsz, DRIFT_EUNSUPPORTED, "chat template: a NUL byte in the default system turn");
            break;
        }
        t->family = DRIFT_CHAT_CHATML;
        if (k_shapes[k].has_lead) memcpy(t->lead, lead->s, lead->n + 1);
        toks_free(&tt);
        return 0;
    }
    toks_free(&tt);
    if (rc) {
        memset(t, 0, sizeof *t);
        return rc;
    }
    return drift_why(err, errsz, DRIFT_EUNSUPPORTED,
        "chat template: a %s template of %zu bytes that is none of the shapes rendered (ChatML, ChatML with a default system turn)",
        resembles(tmpl, len), len);
}

int drift_chat_template_from_gguf(drift_chat_template_t *t, const drift_gguf_t *g, char *err, size_t errsz)
{
    if (!t || !g) return drift_why(err, errsz, DRIFT_EINVAL, "chat template: no GGUF file");
    memset(t, 0, sizeof *t);
    if (!drift_gguf_find(g, "tokenizer.chat_template")) return 0;
    drift_gguf_str_t s;
    int rc = drift_gguf_get_str(g, "tokenizer.chat_template", &s, err, errsz);
    if (rc) return rc;
    return drift_chat_template_parse(t, s.s ? s.s : "", (size_t)s.len, err, errsz);
}

int drift_chat_wrap(
    char *out, size_t size, const drift_chat_template_t *t, const char *user_text, size_t *len, char *err, size_t errsz)
{
    if (!out || !size || !t || !user_text)
        return drift_why(err, errsz, DRIFT_EINVAL, "chat wrap: no output, template or text");
    static const char user[] = "<|im_start|>user\n", tail[] = "<|im_end|>\n<|im_start|>assistant\n";
    int chat = t->family == DRIFT_CHAT_CHATML;
    size_t nl = chat ? strlen(t->lead) : 0, nu = chat ? sizeof user - 1 : 0, nt = strlen(user_text),
           ne = chat ? sizeof tail - 1 : 0;
    size_t n = nl + nu + nt + ne;
    if (len) *len = n;
    out[0] = 0;
    if (n >= size) return drift_why(err, errsz, DRIFT_ERANGE, "chat wrap: %zu bytes do not fit in %zu", n + 1, size);
    memcpy(out, t->lead, nl);
    memcpy(out + nl, user, nu);
    memcpy(out + nl + nu, user_text, nt);
    memcpy(out + nl + nu + nt, tail, ne);
    out[n] = 0;
    return 0;
}

int drift_chat_wrap_gguf(
    char *out, size_t size, const drift_gguf_t *g, const char *user_text, int *wrapped, char *err, size_t errsz)
{
    drift_chat_template_t t;
    int rc = drift_chat_template_from_gguf(&t, g, err, errsz);
    if (!rc) rc = drift_chat_wrap(out, size, &t, user_text, NULL, err, errsz);
    if (wrapped) *wrapped = !rc && t.family != DRIFT_CHAT_NONE;
    return rc;
}
