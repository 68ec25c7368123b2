// amct kernel sim: the CPU emulation of the AscendC API subset (docs/kernel_sim.md).
//
// Kernels include "kernel_operator.h"; in the CPU build (-DAMCT_KERNEL_SIM
// -D__NPU_ARCH__=2201|3510 -I common/ascendc_sim) this file provides the subset with its exact
// declarations, strict checks (SimError) and amct_sim::Launch. Host glue includes only
// "amct_sim_host.h". See README.md in this directory.
#pragma once

#ifndef AMCT_KERNEL_SIM
#error "amct kernel sim: kernel_operator.h requires -DAMCT_KERNEL_SIM (the CPU build); NPU builds use CANN's header"
#endif
#if !defined(__NPU_ARCH__) || (__NPU_ARCH__ != 2201 && __NPU_ARCH__ != 3510)
#error "amct kernel sim: define __NPU_ARCH__ as 2201 (dav-2201: 910B, 910_93) or 3510 (dav-3510: 950)"
#endif
#ifdef ASCENDC_CPU_DEBUG
#error "amct kernel sim: ASCENDC_CPU_DEBUG (CANN's own CPU debug mode) must not be defined with the sim"
#endif

#include "amct_sim_host.h"
#include "sim_types.h"
#include "sim_context.h"
#include "sim_memory.h"
#include "sim_sync.h"
#include "sim_ctrl.h"
#include "sim_data_copy.h"
#include "sim_vector.h"
#include "sim_cast.h"
#include "sim_compare.h"
#include "sim_reduce.h"
#include "sim_gather.h"
#include "sim_launch.h"
#include "sim_mix.h"
#include "sim_cube.h"
