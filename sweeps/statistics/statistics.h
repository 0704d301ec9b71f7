/* statistics: the running mean and RMS (and, for vectors, the covariances) of chosen
 * quantities of the modules before it, per cell, over a window of steps
 * (statistics.c). */
#ifndef STATISTICS_H
#define STATISTICS_H

#include "module.h"

extern const module_def_t statistics_module;

#endif
