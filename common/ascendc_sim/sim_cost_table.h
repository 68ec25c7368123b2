// amct kernel sim, NPU cost model: the cost table of each arch (one per arch, every number with
// its source). Standard library only: host glue (sim_ops.cpp) includes it to print the table.
//
// Sources are of three kinds: "doc: <CANN page>" (a documented fact), "published: <figure>"
// (upstream's measurement), "assumed: <reasoning>" (no source found), or "fitted: <point>" (an
// assumed number pinned by a calibration point). docs/npu_estimates.md lists the calibration.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace amct_sim {
namespace cost {

// Version of the model (timeline rules + numbers). Estimates are labelled with it.
constexpr int kModelVersion = 2;  // 2: the cube side (MTE1, M, FIX), MIX launches, cross-core flags

// Pipes of the timeline. The first four equal amct_sim::detail::Pipe; MTE1, M and FIX (the cube
// side) are reserved so that a cube model can be added without renumbering.
enum Pipe : uint8_t { kS = 0, kV = 1, kMte2 = 2, kMte3 = 3, kMte1 = 4, kM = 5, kFix = 6 };
constexpr int kPipes = 7;
constexpr int kVectorCorePipes = 4;  // S, V, MTE2, MTE3: what AIV kernels use

inline const char* PipeName(int p) {
  static const char* const kNames[kPipes] = {"S", "V", "MTE2", "MTE3", "MTE1", "M", "FIX"};
  return (p >= 0 && p < kPipes) ? kNames[p] : "?";
}

struct Num {
  double value;
  const char* source;
};

// Vector instruction classes: issue cost plus cycles per repeat (256 B of the widest operand).
enum VecClass : uint8_t {
  kVecSimple = 0,  // Add Sub Mul Max Min And Or Adds Muls Maxs Mins shifts Abs Relu Not Duplicate CreateVecIndex
  kVecCast,
  kVecCompare,     // Compare Compares Select
  kVecDiv,
  kVecTranscend,   // Exp Ln Sqrt
  kVecReduce,      // WholeReduce* BlockReduce*
  kVecGather,      // Gather (offset-driven)
  kVecRearrange,   // GatherMask Brcb
  kVecCopy,        // DataCopy UB->UB
  kVecClasses
};

inline const char* VecClassName(int k) {
  static const char* const kNames[kVecClasses] = {"simple", "cast", "compare/select", "div", "exp/ln/sqrt",
                                                  "reduction", "gather", "gathermask/brcb", "ub copy"};
  return (k >= 0 && k < kVecClasses) ? kNames[k] : "?";
}

struct VecCost {
  double cyclesPerRepeat16;  // 8- and 16-bit widest operand
  double cyclesPerRepeat32;  // 32-bit widest operand
  const char* source;
};

struct ArchTable {
  const char* soc;   // "ascend910b" / "ascend950"
  const char* chip;  // the chip the numbers describe
  int arch;          // __NPU_ARCH__
  Num clockGHz;
  Num aicCores;
  Num aivCores;
  Num ubBytes;
  Num hbmGBs;              // whole chip
  Num mtePeakBytesPerCycle;  // one core's DMA rate when HBM is not the limit
  Num dmaIssueCycles;      // pipe occupancy per DataCopy besides the bytes
  Num dmaBurstCycles;      // per burst (row) of a strided DataCopy
  Num dmaLatencyCycles;    // completion latency (not occupancy)
  Num vecIssueCycles;      // per vector instruction
  Num scalarIssueCycles;   // scalar cycles to issue one non-scalar instruction
  Num scalarUbCycles;      // one LocalTensor GetValue/SetValue, with the loop arithmetic around it
  Num scalarGmCycles;      // one GlobalTensor::GetValue
  Num launchUs;            // per kernel launch, device side
  VecCost vec[kVecClasses];
  // ---- the cube side (AIC): the Matmul API's pipeline (sim_cost.h CostBlock::CubeTile) ----
  Num cubeCyclesPerFractal16;   // M pipe: one 16x16x16 bf16/half fractal (fp32 accumulate)
  Num cubeCyclesPerFractalFp4;  // M pipe: one 16x64x16 MX FP4 fractal (0: no MX cube on this arch)
  Num cubeGmBytesPerCycle;      // MTE2 of the AIC, GM -> L1
  Num mte1BytesPerCycle;        // MTE1, L1 -> L0A/L0B
  Num fixBytesPerCycle;         // FIX, L0C -> GM
  Num cubeIssueCycles;          // per cube-side instruction (MTE2/MTE1/M/FIX)
  Num crossCoreFlagCycles;      // CrossCoreSetFlag -> the waiting core may go on
};

// ---- dav-2201: Ascend 910B3 ------------------------------------------------------------------
inline const ArchTable& Table2201() {
  static const ArchTable t{
      "ascend910b",
      "Ascend 910B3 (dav-2201)",
      2201,
      {1.8, "assumed: 1.8 GHz, the AI-core clock usually quoted for 910B; no CANN page found"},
      {20, "assumed: half the AIV count (1 AIC : 2 AIV on Atlas A2); the CANN ATC --aicore_num page "
           "reads it from platform_config/<soc>.ini cube_core_cnt and shows 24 cube / 48 vector for another 910B part"},
      {40, "published: upstream's 910B3 HiF8 runs tile over 40 AIV cores; doc: GetCoreNumAiv (CANN Ascend C "
           "API 07_1031) returns the vector cores of the separated architecture"},
      {196608, "doc: Ascend C TOTAL_UB_SIZE, 192 KB usable per AIV"},
      {1600, "assumed: 1.6 TB/s HBM2e, the figure usually quoted for 910B; no CANN page found"},
      {64, "assumed: one core's MTE rate when it streams alone (~115 GB/s, ~1/14 of HBM); only matters when "
           "fewer than ~14 cores stream"},
      {32, "assumed: so that one 16 KB DataCopy reaches ~90% of the per-core rate (CANN best practice "
           "'move >= 16 KB per DataCopy to approach peak bandwidth', ascendc best practices 10_0012)"},
      {4, "assumed: per-burst descriptor cost of a strided DataCopy (CANN best practice: strided DataCopy "
          "beats a loop of small copies by far)"},
      {500, "assumed: ~0.28 us GM round trip at 1.8 GHz (DRAM latency of HBM parts)"},
      {10, "assumed: vector pipeline start-up per instruction"},
      {2, "assumed: the scalar unit issues every instruction to the pipe queues"},
      {17, "fitted: upstream HiF8 encode on 910B3, slope 1M -> 4M elements = 52 cycles per element of a "
           "3-access scalar LUT loop on 40 AIV (hold-out: 16M)"},
      {200, "assumed: scalar GM read through the data cache, a miss to HBM"},
      {20, "assumed: device-side kernel start on all cores; upstream's ~0.21 ms per-call floor is host "
           "work the model does not estimate"},
      {
          {1, 1, "doc: one repeat = 8 x 32 B datablocks = 256 B (CANN cceintrinsic 0007); assumed 1 cycle"},
          {1, 2, "assumed: conversions through fp32 lanes take 2 cycles per fp32 repeat"},
          {1, 1, "assumed: like simple ops"},
          {4, 8, "assumed: iterative divide, 4x/8x a simple op"},
          {4, 8, "assumed: polynomial/iterative, 4x/8x a simple op"},
          {2, 2, "assumed: reduction tree within a repeat"},
          {8, 8, "assumed: offset-driven reads, one 32-B bank access per element group"},
          {1, 1, "assumed: like simple ops"},
          {1, 1, "assumed: 256 B per cycle like a simple op"},
      },
      {1, "assumed: one 16x16x16 fp16 fractal per cycle per AIC: 4096 MAC x 2 x 20 AIC x 1.8 GHz = 295 TFLOPS, "
          "the order of the ~300 TFLOPS fp16 usually quoted for 910B; no CANN page gives the cube rate"},
      {0, "doc: MxMatmul exists only on Ascend 950 (asc-devkit MxMatmul场景.md)"},
      {128, "assumed: operand panels shared by neighbouring cores hit L2 (the model has no L2), ~2x one core's "
            "HBM stream"},
      {256, "assumed: L1 -> L0 moves 512 B fractal rows; 256 B/cycle keeps the M pipe fed at baseK 64"},
      {128, "assumed: fp32 L0C rows out through the fixpipe at 128 B/cycle"},
      {10, "assumed: as vecIssueCycles"},
      {200, "assumed: a round trip through the AI core's scheduling module (~0.1 us)"}};
  return t;
}

// ---- dav-3510: Ascend 950 ---------------------------------------------------------------------
inline const ArchTable& Table3510() {
  static const ArchTable t{
      "ascend950",
      "Ascend 950PR (dav-3510)",
      3510,
      {1.8, "assumed: as 910B3; no published 950 clock found"},
      {32, "assumed: upper end of the 28-32 AIC upstream documents for 950 (query at run time)"},
      {64, "assumed: 2 AIV per AIC (upstream SVDQuant runs AIC:AIV = 1:2)"},
      {253952, "doc: Ascend C, 248 KB usable of 256 KB UB per AIV on 950"},
      {1600, "published: 950PR HiBL 1.0, 128 GB at 1.6 TB/s (Huawei Connect 2025 announcement; 950DT: 4 TB/s)"},
      {64, "assumed: as 910B3"},
      {32, "assumed: as 910B3"},
      {4, "assumed: as 910B3"},
      {500, "assumed: as 910B3"},
      {10, "assumed: as 910B3"},
      {2, "assumed: as 910B3"},
      {17, "assumed: as 910B3 (fitted there); no 950 scalar figure published"},
      {200, "assumed: as 910B3"},
      {20, "assumed: as 910B3"},
      {
          {1, 1, "doc: 256 B per repeat; assumed 1 cycle"},
          {1, 2, "assumed: as 910B3"},
          {1, 1, "assumed: as 910B3"},
          {4, 8, "assumed: as 910B3"},
          {4, 8, "assumed: as 910B3"},
          {2, 2, "assumed: as 910B3"},
          {8, 8, "assumed: as 910B3"},
          {1, 1, "assumed: as 910B3"},
          {1, 1, "assumed: as 910B3"},
      },
      {1, "assumed: bf16 at half the published FP8 rate: 950PR 1 PFLOPS FP8 (Huawei Connect 2025) / 2 / (32 AIC x "
          "1.8 GHz x 2) = 4340 MAC/cycle, one 16x16x16 fractal per cycle"},
      {1, "assumed: MXFP4 at the published 2 PFLOPS (4x bf16, Huawei Connect 2025): a 16x64x16 fractal per cycle"},
      {128, "assumed: as 910B3"},
      {256, "assumed: as 910B3"},
      {128, "assumed: as 910B3"},
      {10, "assumed: as 910B3"},
      {200, "assumed: as 910B3"}};
  return t;
}

// Soc name -> table (nullptr for an unknown name).
inline const ArchTable* TableForSoc(const std::string& soc) {
  if (soc == "ascend910b" || soc == "ascend910_93" || soc == "910b" || soc == "910B3") return &Table2201();
  if (soc == "ascend950" || soc == "950") return &Table3510();
  return nullptr;
}

inline const ArchTable* TableForArch(int arch) {
  if (arch == 2201) return &Table2201();
  if (arch == 3510) return &Table3510();
  return nullptr;
}

// HBM bytes per cycle one core gets when `streaming` cores share HBM, capped by its MTE rate.
inline double CoreDmaBytesPerCycle(const ArchTable& t, uint32_t streaming) {
  const double hbmPerCycle = t.hbmGBs.value / t.clockGHz.value;  // GB/s / Gcycle/s = B/cycle
  const double share = hbmPerCycle / (streaming == 0 ? 1 : streaming);
  return share < t.mtePeakBytesPerCycle.value ? share : t.mtePeakBytesPerCycle.value;
}

// ---- JSON rendering of a table (for the Python side and docs/npu_estimates.md) ----------------
inline std::string JsonString(const char* s) {
  std::string out = "\"";
  for (const char* p = s; *p; ++p) {
    if (*p == '"' || *p == '\\') out += '\\';
    out += *p;
  }
  return out + "\"";
}

inline std::string JsonNum(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

inline std::string TableJson(const ArchTable& t) {
  auto num = [](const char* name, const Num& n) {
    return JsonString(name) + ": {\"value\": " + JsonNum(n.value) + ", \"source\": " + JsonString(n.source) + "}";
  };
  std::string s = "{\"model_version\": " + std::to_string(kModelVersion) + ", \"soc\": " + JsonString(t.soc) +
                  ", \"chip\": " + JsonString(t.chip) + ", \"arch\": " + std::to_string(t.arch) + ", ";
  s += num("clock_ghz", t.clockGHz) + ", " + num("aic_cores", t.aicCores) + ", " + num("aiv_cores", t.aivCores) +
       ", " + num("ub_bytes", t.ubBytes) + ", " + num("hbm_gb_per_s", t.hbmGBs) + ", " +
       num("mte_peak_bytes_per_cycle", t.mtePeakBytesPerCycle) + ", " + num("dma_issue_cycles", t.dmaIssueCycles) +
       ", " + num("dma_burst_cycles", t.dmaBurstCycles) + ", " + num("dma_latency_cycles", t.dmaLatencyCycles) +
       ", " + num("vec_issue_cycles", t.vecIssueCycles) + ", " + num("scalar_issue_cycles", t.scalarIssueCycles) +
       ", " + num("scalar_ub_access_cycles", t.scalarUbCycles) + ", " +
       num("scalar_gm_read_cycles", t.scalarGmCycles) + ", " + num("launch_us", t.launchUs) + ", " +
       num("cube_cycles_per_fractal_16bit", t.cubeCyclesPerFractal16) + ", " +
       num("cube_cycles_per_fractal_fp4", t.cubeCyclesPerFractalFp4) + ", " +
       num("cube_gm_bytes_per_cycle", t.cubeGmBytesPerCycle) + ", " + num("mte1_bytes_per_cycle", t.mte1BytesPerCycle) +
       ", " + num("fix_bytes_per_cycle", t.fixBytesPerCycle) + ", " + num("cube_issue_cycles", t.cubeIssueCycles) + ", " +
       num("cross_core_flag_cycles", t.crossCoreFlagCycles) + ", \"vector\": [";
  for (int k = 0; k < kVecClasses; ++k) {
    if (k) s += ", ";
    s += "{\"class\": " + JsonString(VecClassName(k)) +
         ", \"cycles_per_repeat_16bit\": " + JsonNum(t.vec[k].cyclesPerRepeat16) +
         ", \"cycles_per_repeat_32bit\": " + JsonNum(t.vec[k].cyclesPerRepeat32) +
         ", \"source\": " + JsonString(t.vec[k].source) + "}";
  }
  return s + "]}";
}

}  // namespace cost
}  // namespace amct_sim
