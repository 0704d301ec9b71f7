/* The physics modules tessera knows, by the names a configuration's "modules" gives. A
 * new module adds its definition here (and its folder to sweeps/). */
#include "app.h"

#include "cpu_threads.h"
#include "d2q37.h"
#include "lbm_sim.h"
#include "scalar.h"
#include "shan_chen.h"
#include "statistics.h"
#include "thermal.h"

const module_def_t *const app_modules[] = {&lbm_module, &thermal_module, &shan_chen_module,
                                          &d2q37_module, &scalar_module,
                                          &statistics_module, NULL};

const sim_setup_t app_sim_setup = {.set_threads = cpu_threads_set};
