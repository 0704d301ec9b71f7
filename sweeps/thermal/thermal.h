/* thermal: the physics module of a temperature advected by the flow, with Boussinesq
 * buoyancy (thermal.c). */
#ifndef THERMAL_H
#define THERMAL_H

#include "module.h"

extern const module_def_t thermal_module;

#endif
