/* shan_chen: the physics module of single-component multiphase flow with the Shan-Chen
 * pseudopotential (shan_chen.c). */
#ifndef SHAN_CHEN_H
#define SHAN_CHEN_H

#include "module.h"

extern const module_def_t shan_chen_module;

#endif
