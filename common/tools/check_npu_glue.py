"""Compile the NPU host glue with `g++ -fsyntax-only` against the real torch_npu headers.

The NPU path cannot run without an Ascend device and CANN, but its host code (the PrivateUse1
registrations in */op_extension/*.cpp and common/op_host/*.cpp) must at least compile against
the torch_npu release that pairs with our torch. This tool downloads that torch_npu wheel with
`pip download --no-deps` (it is never installed: an installed torch_npu breaks `import torch`
without CANN), extracts only its include/ directory, and checks every host file.

Excluded: kernel files (AscendC, compiled by bisheng) and common/op_host/platform_npu.cpp, the
sole includer of CANN's platform_ascendc.h, which the wheel does not ship.

    python common/tools/check_npu_glue.py [--cache DIR] [--wheel FILE] [files...]
"""
import argparse
import concurrent.futures
import glob
import os
import subprocess
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CANN_ONLY_FILES = {os.path.join("common", "op_host", "platform_npu.cpp")}


def torch_facts():
    import torch
    from torch.utils import cpp_extension

    release = torch.__version__.split("+", 1)[0]
    return release, cpp_extension.include_paths(), int(torch._C._GLIBCXX_USE_CXX11_ABI)


def find_or_download_wheel(cache, release):
    os.makedirs(cache, exist_ok=True)
    pattern = os.path.join(cache, f"torch_npu-{release}*.whl")
    found = sorted(glob.glob(pattern))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", cache,
                        f"torch_npu=={release}"], check=True)
        found = sorted(glob.glob(pattern))
    if not found:
        raise SystemExit(f"check_npu_glue: no torch_npu wheel for torch {release} in {cache}")
    return found[-1]


def extract_headers(wheel, cache):
    """Unpack torch_npu/include/ only; return the include root."""
    target = os.path.join(cache, os.path.basename(wheel)[: -len(".whl")])
    include = os.path.join(target, "torch_npu", "include")
    if not os.path.isdir(include):
        with zipfile.ZipFile(wheel) as archive:
            members = [m for m in archive.namelist() if m.startswith("torch_npu/include/")]
            archive.extractall(target, members)
    return include


def glue_files():
    files = glob.glob(os.path.join(ROOT, "*", "op_extension", "*.cpp"))
    files += glob.glob(os.path.join(ROOT, "common", "op_host", "*.cpp"))
    return sorted(f for f in files if os.path.relpath(f, ROOT) not in CANN_ONLY_FILES)


def compile_command(path, torch_includes, abi, npu_include, arch):
    op_dir = os.path.dirname(os.path.dirname(path))
    cmd = ["g++", "-std=c++17", "-fsyntax-only", f"-D_GLIBCXX_USE_CXX11_ABI={abi}", f"-D__NPU_ARCH__={arch}",
           "-DAMCT_WITH_NPU=1"]
    for inc in torch_includes:
        cmd += ["-isystem", inc]
    cmd += [f"-I{npu_include}", f"-I{npu_include}/third_party/acl/inc", f"-I{npu_include}/third_party/hccl/inc"]
    cmd += [f"-I{ROOT}/common/op_host", f"-I{ROOT}/common/ascendc_sim", f"-I{op_dir}/op_kernel",
            f"-I{op_dir}/op_extension", path]
    return cmd


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", default=os.path.join(ROOT, ".npu_headers"),
                        help="where the torch_npu wheel is downloaded and unpacked")
    parser.add_argument("--wheel", help="use this torch_npu wheel instead of downloading one")
    parser.add_argument("--arch", default="2201", choices=["2201", "3510"])
    parser.add_argument("files", nargs="*", help="host files to check (default: all NPU glue)")
    args = parser.parse_args(argv)

    release, torch_includes, abi = torch_facts()
    wheel = args.wheel or find_or_download_wheel(args.cache, release)
    npu_include = extract_headers(wheel, args.cache)
    files = [os.path.abspath(f) for f in args.files] or glue_files()
    failures = 0

    def check(path):
        return subprocess.run(compile_command(path, torch_includes, abi, npu_include, args.arch),
                              capture_output=True, text=True)

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(check, files))
    for path, result in zip(files, results):
        status = "ok" if result.returncode == 0 else "FAILED"
        print(f"npu-glue-syntax {status}: {os.path.relpath(path, ROOT)}")
        if result.returncode != 0:
            failures += 1
            print(result.stderr[-4000:])
    print(f"npu-glue-syntax: {len(files) - failures} of {len(files)} files compile against "
          f"{os.path.basename(wheel)} headers")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
