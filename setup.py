"""Packages the staged build (staging/amct_ops, made by ops_build.sh) into a platform wheel.

The operators are compiled by ops_build.sh (CMake, one build per operator). This file only
packages what that build staged, so `pip install .` and `ops_build.sh` produce the same wheel;
without a staged build it stops at once and says how to make one.
"""
import runpy
import sys
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.dist import Distribution

ROOT = Path(__file__).resolve().parent
STAGING = ROOT / "staging"
BUILD_INFO = STAGING / "amct_ops" / "_build_info.py"


class PlatformDistribution(Distribution):
    """The package ships compiled libraries: force a cpXY-cpXY-linux_<arch> wheel tag."""

    def has_ext_modules(self):
        return True


def staged_build_info():
    if not BUILD_INFO.is_file():
        sys.exit(
            "amct_ops: no staged build found (staging/amct_ops/_build_info.py is missing).\n"
            "Build the operators first with `bash ops_build.sh` (see README.md); it compiles every\n"
            "operator, stages the package and then runs `pip wheel` on this directory itself."
        )
    return runpy.run_path(str(BUILD_INFO))["BUILD_INFO"]


def public_version(version):
    """'2.13.0+cpu' -> '2.13.0': the pin must match any local build of that release."""
    return version.split("+", 1)[0]


info = staged_build_info()
torch_release = public_version(info["torch_version"])
major_minor = ".".join(torch_release.split(".")[:2])
next_minor = f"{major_minor.split('.')[0]}.{int(major_minor.split('.')[1]) + 1}"

setup(
    packages=find_packages(where="staging"),
    package_dir={"": "staging"},
    # amct_ops/lib/ (the shared runtime) is a data directory, not a package.
    package_data={"": ["*.so"], "amct_ops": ["lib/*.so"]},
    include_package_data=False,
    install_requires=[f"torch=={torch_release}"],
    # plot: matplotlib for `python -m amct_ops bench <pkg> --plot out.png`.
    extras_require={"npu": [f"torch_npu>={torch_release},<{next_minor}"], "plot": ["matplotlib"]},
    distclass=PlatformDistribution,
    zip_safe=False,
)
