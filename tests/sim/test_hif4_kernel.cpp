// Driver of the hifloat4_cast kernel outside torch, so that tests/test_kernel_sim_ops.py can run
// the one kernel source on the sim of both arches (the CPU build compiles only its SOC's arch):
//
//   test_hif4_kernel <mode> <dtype> <blocks> <cores> <tileBlocks> <in0> <in1|-> <out0> <out1|->
//
// mode 0 fake-quant, 1 pack, 2 unpack; dtype 0 fp16, 1 bf16, 2 fp32 (input of fake-quant/pack,
// output of unpack). Files are raw little-endian bytes: fake-quant in0 = x, out0 = y; pack
// in0 = x, out0 = scale, out1 = value; unpack in0 = scale, in1 = value, out0 = y.
// The work split follows the host's rule (hifloat4_cast_host.cpp) for the given core count.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "hifloat4_cast_kernel.cpp"

namespace {

std::vector<uint8_t> ReadFile(const char* path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

void WriteFile(const char* path, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 10) {
    std::fprintf(stderr, "usage: %s mode dtype blocks cores tileBlocks in0 in1|- out0 out1|-\n", argv[0]);
    return 2;
  }
  const uint32_t mode = static_cast<uint32_t>(std::atoi(argv[1]));
  const uint32_t dtype = static_cast<uint32_t>(std::atoi(argv[2]));
  const uint64_t blocks = std::strtoull(argv[3], nullptr, 10);
  const uint64_t cores = std::strtoull(argv[4], nullptr, 10);
  const uint32_t tile = static_cast<uint32_t>(std::atoi(argv[5]));
  const uint64_t elem = dtype == amct_hif4::kFp32 ? 4 : 2;
  const uint64_t n = blocks * 64;
  std::vector<uint8_t> in0 = ReadFile(argv[6]);
  std::vector<uint8_t> in1 = std::string(argv[7]) == "-" ? std::vector<uint8_t>() : ReadFile(argv[7]);
  std::vector<uint8_t> out0, out1;
  if (mode == amct_hif4::kFakeQuant) {
    out0.assign(n * elem, 0xAB);
  } else if (mode == amct_hif4::kPack) {
    out0.assign(blocks * 4, 0xAB);
    out1.assign(blocks * 32, 0xAB);
  } else {
    out0.assign(n * elem, 0xAB);
  }
  amct_hif4::Hif4Tiling t{};
  const uint64_t perCore = (blocks + cores - 1) / cores;
  t.blockNum = static_cast<uint32_t>((blocks + perCore - 1) / perCore);
  t.mode = mode;
  t.dtype = dtype;
  t.tileBlocks = tile;
  t.totalBlocks = blocks;
  t.blocksPerCore = perCore;
  t.blocksLastCore = blocks - (t.blockNum - 1) * perCore;
  amct_sim::SetPlatform(static_cast<int64_t>(cores), 0);
  try {
    amct_sim::GmScope scope{{in0.data(), in0.size(), false},
                            {in1.data(), in1.size(), false},
                            {out0.data(), out0.size(), true},
                            {out1.data(), out1.size(), true},
                            {&t, sizeof(t), false}};
    amct_hifloat4_cast_launch(t.blockNum, nullptr, in0.data(), in1.empty() ? nullptr : in1.data(), out0.data(),
                              out1.empty() ? nullptr : out1.data(), reinterpret_cast<uint8_t*>(&t));
  } catch (const amct_sim::SimError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  WriteFile(argv[8], out0);
  if (std::string(argv[9]) != "-") WriteFile(argv[9], out1);
  return 0;
}
