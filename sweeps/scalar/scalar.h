/* scalar: a passive scalar carried by the flow (advection and diffusion), on CPU and GPU
 * blocks; docs/adding-a-sweep.md builds it step by step. */
#ifndef SCALAR_H
#define SCALAR_H

#include "module.h"

extern const module_def_t scalar_module;

#endif
