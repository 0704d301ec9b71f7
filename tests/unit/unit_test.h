/* Assertions shared by the unit tests: a call that must succeed, and a call that must
 * fail with a given code and a message containing a fragment. Each needs a
 * `tsr_error_t err` in scope; on failure they print the call and the error text. */
#ifndef UNIT_TEST_H
#define UNIT_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tsr_error.h"

/* The call returns TSR_OK. */
#define ASSERT_OK(call)                                                                  \
  do {                                                                                   \
    tsr_status st_ = (call);                                                             \
    if (st_ != TSR_OK) fail_msg("%s failed: %s", #call, err.text);                       \
  } while (0)

/* err's message contains frag. */
#define ASSERT_HAS(frag)                                                                 \
  do {                                                                                   \
    if (strstr(err.text, (frag)) == NULL)                                                \
      fail_msg("error text \"%s\" lacks \"%s\"", err.text, (frag));                      \
  } while (0)

/* The call (with err cleared first) returns want, err.code is want, and the message
 * contains frag. */
#define ASSERT_ERR(call, want, frag)                                                     \
  do {                                                                                   \
    tsr_error_clear(&err);                                                               \
    tsr_status st_ = (call);                                                             \
    if (st_ != (want))                                                                   \
      fail_msg("%s returned %d, expected %d (text: %s)", #call, (int)st_, (int)(want),   \
               err.text);                                                                \
    assert_int_equal(err.code, (want));                                                  \
    ASSERT_HAS(frag);                                                                    \
  } while (0)

#endif
