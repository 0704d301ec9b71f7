/* tsr_error: status codes and the error record every fallible tessera function fills.
 *
 * Every fallible function returns tsr_status (TSR_OK == 0) and, on failure, fills the
 * caller's tsr_error_t with a code, the source location and a message that says what
 * (file, key path, BlockID, direction), the value, and what is allowed.
 *
 * Inside a function that declares `tsr_status st = TSR_OK;`, takes `tsr_error_t *err`
 * and ends with a `cleanup:` label:
 *   TSR_TRY(call)                   propagates a failing call's status;
 *   TSR_CHECK(cond, code, fmt, ...) raises an error when cond is false.
 * This lives in blocks/, the lowest layer, because every layer reports errors. */
#ifndef TSR_ERROR_H
#define TSR_ERROR_H

#include <stddef.h>

#define TSR_NODISCARD __attribute__((warn_unused_result))
#define TSR_PRINTF(f, a) __attribute__((format(printf, f, a)))

typedef enum tsr_status {
  TSR_OK = 0,
  TSR_ERR_INVALID = 1, /* bad input: config value, argument, selector expression */
  TSR_ERR_IO = 2,      /* a file could not be read or written */
  TSR_ERR_NOMEM = 3,   /* an allocation failed */
  TSR_ERR_LOOKUP = 4,  /* registry: no item or more than one item matched */
  TSR_ERR_CORRUPT = 5, /* received bytes that do not decode or do not fit */
  TSR_ERR_MPI = 6,     /* an MPI call failed */
  TSR_ERR_OPENCL = 7,  /* an OpenCL call failed */
  TSR_ERR_INTERNAL = 8, /* a broken invariant between modules */
  TSR_ERR_DIVERGED = 9  /* the simulated fields left the range where the method is stable */
} tsr_status;

enum { TSR_ERROR_TEXT_MAX = 4096 };

typedef struct tsr_error {
  tsr_status code;
  const char *file; /* source file that raised the error (static string) */
  int line;
  char text[TSR_ERROR_TEXT_MAX];
} tsr_error_t;

/* Fills err (may be NULL) and returns code. */
tsr_status tsr_error_set(tsr_error_t *err, tsr_status code, const char *file, int line,
                         const char *fmt, ...) TSR_PRINTF(5, 6);

/* Puts "<context>: " in front of the message already in err. */
void tsr_error_prefix(tsr_error_t *err, const char *fmt, ...) TSR_PRINTF(2, 3);

/* Clears err to TSR_OK with an empty text. */
void tsr_error_clear(tsr_error_t *err);

/* Short name of a status code ("invalid input", "I/O error", ...). */
const char *tsr_status_name(tsr_status code);

#define TSR_TRY(call)                                                                    \
  do {                                                                                   \
    st = (call);                                                                         \
    if (st != TSR_OK) goto cleanup;                                                      \
  } while (0)

#define TSR_CHECK(cond, code, ...)                                                       \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      st = tsr_error_set(err, (code), __FILE__, __LINE__, __VA_ARGS__);                  \
      goto cleanup;                                                                      \
    }                                                                                    \
  } while (0)

/* Raises unconditionally. */
#define TSR_FAIL(code, ...)                                                              \
  do {                                                                                   \
    st = tsr_error_set(err, (code), __FILE__, __LINE__, __VA_ARGS__);                    \
    goto cleanup;                                                                        \
  } while (0)

#endif
