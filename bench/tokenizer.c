/* bench/tokenizer.c — what do SmolLM2's tokenizer cost: building it from the GGUF file (49152
 * tokens, 48900 merges into hash tables) and encoding a 10 kB text (prose, digits, Cyrillic,
 * CJK, emoji, ChatML markers parsed as special tokens)? Goals: build < 100 ms, encode < 50 ms.
 *
 * Thread CPU time, min and median of 20 repetitions (the file is mapped once; the build is
 * drift_tokenizer_from_gguf on the mapping). Usage: bench_tokenizer [GGUF]
 * (default models/SmolLM2-135M-Instruct.Q4_1.gguf under the source tree). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "drift.h"
#include "gguf.h"
#include "tokenizer.h"
#include "cli.h"

enum { REPS = 20, TEXT = 10240 };

int main(int argc, char **argv)
{
    const char *pos[1];
    int np = bench_args(NULL, 0, pos, 1, argc, argv,
        "usage: bench_tokenizer [GGUF]   (default models/SmolLM2-135M-Instruct.Q4_1.gguf)");
    const char *path = np ? pos[0] : DRIFT_SOURCE_DIR "/models/SmolLM2-135M-Instruct.Q4_1.gguf";
    drift_gguf_t g;
    char err[256];
    if (drift_gguf_open(&g, path, err, sizeof err)) {
        printf("skipped: %s (./lab models get smollm2-135m)\n", err);
        return 0;
    }
    static const char unit[] = "<|im_start|>user\nThe quick brown fox jumps over the lazy dog, 12345 times! "
                               "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82 \xE4\xBD\xA0\xE5\xA5\xBD "
                               "\xF0\x9F\x98\x80 don't stop<|im_end|>\n";
    static char text[TEXT + 1];
    size_t ul = strlen(unit), at = 0;
    while (at + ul <= TEXT) memcpy(text + at, unit, ul), at += ul;
    memset(text + at, 'x', TEXT - at);
    text[TEXT] = 0;
    static int ids[TEXT];
    double build[REPS], enc[REPS];
    int n = 0;
    for (int r = 0; r < REPS; r++) {
        drift_tokenizer_t t;
        double t0 = bench_cpu_now();
        if (drift_tokenizer_from_gguf(&t, &g, err, sizeof err)) {
            fprintf(stderr, "bench_tokenizer: %s\n", err);
            return 1;
        }
        double t1 = bench_cpu_now();
        if (drift_tokenizer_encode_ex(&t, text, 0, 1, ids, TEXT, &n)) return 1;
        double t2 = bench_cpu_now();
        build[r] = t1 - t0, enc[r] = t2 - t1;
        drift_tokenizer_free(&t);
    }
    bench_stat_t b = bench_stat(build, REPS), e = bench_stat(enc, REPS);
    printf("SmolLM2 tokenizer, thread CPU time over %d runs (min / median)\n", REPS);
    printf("  build from GGUF (49152 tokens, 48900 merges): %7.2f / %7.2f ms   (goal < 100 ms)\n", 1e3 * b.min,
        1e3 * b.med);
    printf("  encode %d bytes -> %d ids:                  %7.2f / %7.2f ms   (goal < 50 ms)\n", TEXT, n, 1e3 * e.min,
        1e3 * e.med);
    drift_gguf_close(&g);
    return 0;
}
