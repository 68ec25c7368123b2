// amct kernel sim: what kernels include as "lib/matmul_intf.h" (CANN's include/adv_api/matmul/
// matmul_intf.h): the Matmul high-level API of sim_matmul.h. Define ASCENDC_CUBE_ONLY before the
// include, as the real header needs for the form the sim emulates (Matmul = MatmulImpl on the AIC).
#pragma once

#include "../kernel_operator.h"
#include "../sim_matmul.h"
