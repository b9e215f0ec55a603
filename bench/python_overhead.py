"""What stepping from Python costs over stepping from C++, on the peer sheet.

The peer scene of bench/peer_scene.hpp (256 x 256, spacing 0.5, top row pinned, stiffness 110 000,
one iteration, 6 substeps, 60 Hz, one thread), settled 3 s, then timed in pairs of short rounds:
`frames` calls of Simulation.step() from a Python loop, and the same calls from a C++ loop inside
the module (simdverlet._extension._step_in_cpp), on the same simulation, the pair's order
alternating. Short rounds and per-pair ratios keep a shared machine's drift out of the comparison
(long rounds of one loop, then the other, drifted by several percent either way). Both loops are
checked to give the same bits first. Prints a Markdown report; --out writes it too.

    build/python-venv/bin/python bench/python_overhead.py --out bench/results/python_overhead.md

(the environment scripts/python.sh builds and installs the package into).
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

import simdverlet as sv
from simdverlet import _extension as _simdverlet

FRAME = dict(dt=1.0 / 60.0, gravity=(0.0, 9.81, 0.0), iterations=1, substeps=6)


def peer_sheet():
    sim = sv.Simulation()
    sim.add_cloth(width=256, height=256, spacing=0.5, stiffness=110000.0, curvature_strength=0.0,
                  pinned=lambda col, row: row == 0)
    return sim


def python_loop(sim, frames):
    for _ in range(frames):
        sim.step(**FRAME)


def cpp_loop(sim, frames):
    _simdverlet._step_in_cpp(sim, frames, **FRAME)


def same_bits(settled):
    a, b = peer_sheet(), peer_sheet()
    a.load(settled)
    b.load(settled)
    python_loop(a, 10)
    cpp_loop(b, 10)
    return a.positions().tobytes() == b.positions().tobytes()


def cpp_benchmark(path):
    """Median ms a frame of the C++ benchmark binary's BM_hanging_256 at this setting, or None."""
    if not os.path.exists(path):
        return None
    out = subprocess.run([path, "--benchmark_filter=BM_hanging_256/k:110000/substeps:6/threads:1/",
                          "--benchmark_repetitions=5", "--benchmark_report_aggregates_only=true",
                          "--benchmark_format=json"], capture_output=True, text=True, check=True).stdout
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            return b["ms/frame"]
    return None


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=120, help="pairs of rounds")
    parser.add_argument("--frames", type=int, default=5, help="frames per timed round")
    parser.add_argument("--out", help="also write the report here")
    parser.add_argument("--cpp-bench", default="build/release/bench/simdverlet_bench",
                        help="the C++ benchmark binary (cmake --workflow --preset release); when it exists, "
                             "its BM_hanging_256 at the same setting is run for reference")
    args = parser.parse_args()

    sim = peer_sheet()
    cpp_loop(sim, 180)
    strain = sim.peak_strain()
    if sim.diverged() or not strain <= 0.05:
        sys.exit(f"the peer sheet does not hang at rest within 5 % strain (peak {strain})")
    if not same_bits(sim.save()):
        sys.exit("the Python and C++ loops gave different bits")

    wall = {"python": [], "cpp": []}
    cpu = {"python": [], "cpp": []}  # this thread's CPU time: what the machine's other load steals is left out
    loops = [("python", python_loop), ("cpp", cpp_loop)]
    for k in range(args.rounds):
        for name, loop in loops if k % 2 == 0 else loops[::-1]:
            start_wall, start_cpu = time.perf_counter(), time.thread_time()
            loop(sim, args.frames)
            cpu[name].append((time.thread_time() - start_cpu) / args.frames)
            wall[name].append((time.perf_counter() - start_wall) / args.frames)

    def ratio(times):
        return statistics.median(p / c for p, c in zip(times["python"], times["cpp"]))

    reference = cpp_benchmark(args.cpp_bench)
    py_ms = 1e3 * statistics.median(wall["python"])
    cpp_ms = 1e3 * statistics.median(wall["cpp"])
    report = "\n".join([
        "# Stepping from Python against stepping from C++",
        "",
        f"Command: `build/python-venv/bin/python bench/python_overhead.py "
        f"--rounds {args.rounds} --frames {args.frames}`",
        "(package built and installed by `bash scripts/python.sh`: pip, g++ -O3, one build per instruction set; "
        f"this run imported the `{sv.instruction_set}` one).",
        "",
        f"CPU: {cpu_name()}; Python {platform.python_version()}, NumPy {np.__version__}.",
        "",
        "Scene: the peer sheet (256 x 256, stiffness 110 000, 6 substeps, 1 iteration, 60 Hz, one thread), "
        f"settled 3 s (peak strain {strain:.4f}). {args.rounds} pairs of rounds of {args.frames} frames, one "
        "round of each loop on the same simulation, the order alternating; the loops give the same bits "
        "(checked).",
        "",
        "| loop | median ms / frame (wall) | median ms / frame (CPU) |",
        "|---|---:|---:|",
        f"| C++ (`_step_in_cpp`) | {cpp_ms:.3f} | {1e3 * statistics.median(cpu['cpp']):.3f} |",
        f"| Python (`sim.step(...)`) | {py_ms:.3f} | {1e3 * statistics.median(cpu['python']):.3f} |",
        "",
        f"Python / C++, median of the {args.rounds} pairs' ratios: **{ratio(wall):.4f}** in wall time, "
        f"{ratio(cpu):.4f} in CPU time (target <= 1.03).",
        "",
        (f"For reference, the C++ benchmark program (`{args.cpp_bench} "
         "--benchmark_filter=BM_hanging_256/k:110000/substeps:6/threads:1/`, its own process, run just "
         f"before): median {reference:.3f} ms a frame." if reference is not None else
         "The C++ benchmark program was not built, so its own-process figure is not shown."),
        "",
    ])
    print(report)
    if args.out:
        with open(args.out, "w") as f:
            f.write(report)


if __name__ == "__main__":
    main()
