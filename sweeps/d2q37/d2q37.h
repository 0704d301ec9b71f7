/* d2q37: the thermal compressible lattice Boltzmann model on D2Q37 (Sbragaglia et al.,
 * J. Fluid Mech. 628 (2009) 299; Calore et al. 2016), as a physics module. */
#ifndef D2Q37_H
#define D2Q37_H

#include "module.h"

extern const module_def_t d2q37_module;

#endif
