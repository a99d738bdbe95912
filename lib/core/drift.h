/* drift.h — status codes shared by every libdrift module.
 *
 * Library functions return 0 on success or one of these negative codes; only programs
 * print and exit (docs/decisions.md). */
#ifndef DRIFT_H
#define DRIFT_H

#ifdef __cplusplus
extern "C" {
#endif

#define DRIFT_VERSION "0.1.0"

/* On the declaration of a function that returns a status code (0 or a DRIFT_E* code, or a
 * count or index that is negative on error): a caller that drops the code gets a warning,
 * an error under -Werror, so a failure cannot pass unseen. GCC, Clang and nvcc (for host
 * code) know the attribute in C and C++; other compilers get nothing. */
#if defined(__GNUC__) || defined(__clang__)
#define DRIFT_MUST_CHECK __attribute__((warn_unused_result))
#else
#define DRIFT_MUST_CHECK
#endif

/* The element count of an array (not a pointer), as an int: a table's columns, a spec's options. */
#define DRIFT_COUNTOF(array) ((int)(sizeof(array) / sizeof((array)[0])))

/* An OpenMP pragma, DRIFT_OMP("omp parallel for"), that a build without OpenMP drops: the loop
 * then runs on one thread. */
#ifdef _OPENMP
#define DRIFT_OMP(x) _Pragma(x)
#else
#define DRIFT_OMP(x)
#endif

enum {
    DRIFT_OK = 0,
    DRIFT_EINVAL = -1,      /* malformed argument or spec */
    DRIFT_ENOMEM = -2,      /* allocation failed or size cannot fit in memory */
    DRIFT_EIO = -3,         /* file could not be read or written */
    DRIFT_ERANGE = -4,      /* value outside the representable or allowed range */
    DRIFT_EUNSUPPORTED = -5 /* combination the model does not define */
};

const char *drift_strerror(int code);

#ifdef __cplusplus
}
#endif

#endif
