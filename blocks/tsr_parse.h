/* tsr_parse: numbers written as text by people (command-line options, environment
 * variables), read strictly.
 *
 * The whole text must be the number: no leading or trailing blanks or characters, no
 * empty text. An integer is an optional sign and decimal digits; a real is what strtod
 * reads in decimal notation (digits, an optional point and exponent), finite, with no
 * hexadecimal, "inf" or "nan". A value outside [min, max], or too large or small to
 * represent (ERANGE), is refused. On refusal *out is left as it was. Messages are the
 * caller's: it knows the option's name. */
#ifndef TSR_PARSE_H
#define TSR_PARSE_H

#include <stdbool.h>
#include <stdint.h>

/* True when text is a decimal integer in [min, max]; *out gets it. */
bool tsr_parse_int(const char *text, int64_t min, int64_t max, int64_t *out);

/* True when text is a finite decimal real in [min, max]; *out gets it. */
bool tsr_parse_real(const char *text, double min, double max, double *out);

#endif
