"""Builds simdverlet's extension once per x86-64 instruction set the kernels are written for.

The C++ library picks its batch width when it is compiled (xsimd's default architecture), so one
binary for every x86-64 is three builds of the same sources: SSE2 (any x86-64), AVX2 with FMA, and
AVX-512 (F, CD, DQ, BW, VL), each as ``simdverlet._simdverlet_<set>``, plus ``simdverlet._cpu``,
built for the baseline, which says what the processor runs. The package imports the widest one
(``src/simdverlet/__init__.py``). Every build keeps floating-point contraction off
(-ffp-contract=off), as the C++ library's own target does, so all three give the same bits.

Everything it needs comes from Debian: python3-setuptools, python3-pybind11, libxsimd-dev and
libeigen3-dev; tinyobjloader (load_obj_mesh) and OpenMP are used where they are found.
"""

import os
import pathlib
import shutil

from pybind11.setup_helpers import ParallelCompile, Pybind11Extension, build_ext
from setuptools import setup

HERE = pathlib.Path(__file__).resolve().parent
INCLUDE = HERE.parent / "include"

# Instruction sets and the flags that select them; the names are what _cpu.supported() reports.
INSTRUCTION_SETS = {
    "sse2": [],
    "avx2": ["-mavx2", "-mfma"],
    "avx512": ["-mavx512f", "-mavx512cd", "-mavx512dq", "-mavx512bw", "-mavx512vl", "-mavx2", "-mfma"],
}
SOURCES = ["ext/module.cpp", "ext/bind_float.cpp", "ext/bind_double.cpp"]


def eigen_include():
    for candidate in ("/usr/include/eigen3", "/usr/local/include/eigen3"):
        if pathlib.Path(candidate, "Eigen").is_dir():
            return candidate
    raise RuntimeError("simdverlet needs Eigen's headers: apt install libeigen3-dev")


def optional_parts():
    """Defines and libraries for what this machine has: tinyobjloader and OpenMP."""
    defines, libraries, flags = [], [], []
    has_obj = pathlib.Path("/usr/include/tiny_obj_loader.h").exists()
    defines.append(("SIMDVERLET_HAVE_TINYOBJLOADER", "1" if has_obj else "0"))
    if has_obj:
        libraries.append("tinyobjloader")
    defines.append(("SIMDVERLET_HAVE_OPENMP", "1"))
    defines.append(("SIMDVERLET_HAVE_TBB", "0"))
    flags.append("-fopenmp")
    return defines, libraries, flags


def extensions():
    if not (INCLUDE / "simdverlet" / "simdverlet.hpp").exists():
        raise RuntimeError(f"simdverlet's headers are not at {INCLUDE}: build from the repository's python/ folder")
    defines, libraries, flags = optional_parts()
    # Rebuilt when any header changes, not only its own sources (setuptools compares the times).
    headers = sorted(str(p) for p in INCLUDE.rglob("*.hpp")) + sorted(str(p) for p in (HERE / "ext").glob("*.hpp"))
    common = ["-O3", "-ffp-contract=off", "-fvisibility=hidden"] + flags
    built = []
    for name, isa in INSTRUCTION_SETS.items():
        built.append(
            Pybind11Extension(
                f"simdverlet._simdverlet_{name}",
                SOURCES,
                include_dirs=[str(INCLUDE), eigen_include()],
                define_macros=defines + [("SIMDVERLET_EXTENSION", f"_simdverlet_{name}")],
                extra_compile_args=common + isa,
                extra_link_args=["-fopenmp"],
                libraries=libraries,
                depends=headers,
                cxx_std=20,
            )
        )
    built.append(Pybind11Extension("simdverlet._cpu", ["ext/cpu.cpp"], extra_compile_args=["-O2"], cxx_std=20))
    return built


class BuildEachSetApart(build_ext):
    """Compiles each extension into its own temporary folder: the three builds share their
    sources, and in one folder the second would find the first's objects newer than the
    sources and link them, compiled for another instruction set. Drops the interpreter's -g and -O2 (Debian's
    Python is built with them): the symbols only slow the build, and -O3 is what the library is
    measured with."""

    def build_extensions(self):
        for option in ("-g", "-O2"):
            for attribute in ("compiler_so", "compiler_cxx", "compiler"):
                command = getattr(self.compiler, attribute, None)
                if isinstance(command, list):
                    setattr(self.compiler, attribute, [word for word in command if word != option])
        super().build_extensions()

    def build_extension(self, ext):
        root = self.build_temp
        self.build_temp = os.path.join(root, ext.name.rsplit(".", 1)[-1])
        try:
            super().build_extension(ext)
        finally:
            self.build_temp = root


# Compile the objects of the three builds on every core (pybind11's helper; NPY_NUM_BUILD_JOBS
# overrides the count).
ParallelCompile("NPY_NUM_BUILD_JOBS", default=os.cpu_count() or 1).install()

if shutil.which(os.environ.get("CXX", "c++")) is None:
    raise RuntimeError("simdverlet needs a C++20 compiler (g++ 12 or clang 14): apt install g++")

setup(ext_modules=extensions(), cmdclass={"build_ext": BuildEachSetApart})
