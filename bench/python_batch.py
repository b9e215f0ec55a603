"""Throughput of simdverlet.batch: one batch of drapes on a LocalCluster of 1 worker, then 2.

Each run is a 256 x 256 sheet (2.4 units across) dropped flat on a ball of radius 1 standing on
the floor, 600 frames of 4 substeps (10 s at 60 Hz): about 1.2-1.5 s on one core of the AMD EPYC
this was written on.  (A 48 x 48 sheet for 120 frames takes 3 ms there: a batch of those would
measure dask's per-task overhead, not the simulation.)

The same batch (16 runs by default) goes through simdverlet.batch.run on a cluster from
simdverlet.batch.local_cluster with one worker process, then two (one thread each).  Every
cluster is started and warmed up (its workers import simdverlet and run one drape) before the
clock starts; the batch is timed --rounds times per setup, the setups alternating, and the best
round counts.  Two more setups show where the time goes:

* --malloc both (default): also clusters whose workers keep dask's own glibc setting,
  MALLOC_TRIM_THRESHOLD_=65536 (local_cluster(tune_malloc=False)), which puts every array of a
  large sheet in its own page-aligned mmap (see local_cluster's docstring);
* --baseline (default on): the same drapes on a multiprocessing pool of 1 and 2 spawned processes
  with local_cluster's malloc setting and no dask at all: what this machine allows.

The results of every setup are checked to be byte-identical.  Prints a markdown table and writes
it, with the command, the versions and the CPU, to bench/results/python_batch.md (or --output).

    build/python-venv/bin/python bench/python_batch.py
"""

from __future__ import annotations

import argparse
import datetime
import multiprocessing
import os
import pathlib
import platform
import shlex
import sys
import time

import numpy as np


def drape(p, out):
    """A p["n"] x p["n"] sheet, 2.4 across, dropped from y = 0 on a ball (top at y = 0.05) on the floor."""
    import simdverlet as sv

    n = p["n"]
    spacing = 2.4 / (n - 1)
    sim = sv.Simulation()
    sim.add_cloth(width=n, height=n, spacing=spacing, stiffness=p["stiffness"],
                  position=lambda c, r: (c * spacing, 0.0, r * spacing))
    world = sim.add_colliders()
    ball = world.add_sphere(center=(1.2, 1.05, 1.2), radius=1.0, friction=p["friction"])
    world.add_plane(normal=(0, -1, 0), offset=-2.05)  # +y is down: the floor at y = 2.05
    for _ in range(p["frames"]):
        sim.step(gravity=(0, 9.81, 0), substeps=p["substeps"])
    return {"positions": sim.positions(), "contacts": ball.contacts(), "diverged": sim.diverged()}


def _pool_drape(p):
    return drape(p, None)


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def loadavg() -> str:
    try:
        return open("/proc/loadavg").read().split()[0]
    except OSError:
        return "?"


class DaskSetup:
    def __init__(self, workers, malloc):
        import distributed
        from simdverlet import batch

        self.workers, self.malloc, self.batch = workers, malloc, batch
        self.label = f"simdverlet.batch.run, local_cluster({workers}" + (")" if malloc == "tuned" else ", tune_malloc=False)")
        self.malloc_label = "local_cluster's: mmap 32 MiB, trim 128 MiB" if malloc == "tuned" else "dask's: trim 64 KiB"
        t = time.perf_counter()
        self.cluster = batch.local_cluster(workers, tune_malloc=(malloc == "tuned"))
        self.client = distributed.Client(self.cluster)
        self.client.wait_for_workers(workers)
        self.started = time.perf_counter() - t

    def __call__(self, params):
        return self.batch.run(drape, params, self.client, progress=False)

    def close(self):
        self.client.close()
        self.cluster.close()


class PoolSetup:
    def __init__(self, workers):
        from simdverlet import batch

        self.workers, self.malloc = workers, "tuned"
        self.label = f"multiprocessing pool of {workers} (no dask)"
        self.malloc_label = "local_cluster's: mmap 32 MiB, trim 128 MiB"
        saved = {k: os.environ.get(k) for k in batch._MALLOC_ENV}
        os.environ.update(batch._MALLOC_ENV)
        try:
            t = time.perf_counter()
            self.pool = multiprocessing.get_context("spawn").Pool(workers)
            self.pool.map(int, range(workers))
            self.started = time.perf_counter() - t
        finally:
            batch._restore_environ(saved)

    def __call__(self, params):
        return self.pool.map(_pool_drape, params, chunksize=1)

    def close(self):
        self.pool.close()
        self.pool.join()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=16, help="drapes in the batch (default 16)")
    ap.add_argument("--size", type=int, default=256, help="sheet is SIZE x SIZE particles (default 256)")
    ap.add_argument("--frames", type=int, default=600, help="frames per drape (default 600)")
    ap.add_argument("--substeps", type=int, default=4, help="substeps per frame (default 4)")
    ap.add_argument("--rounds", type=int, default=2, help="timed batches per setup (default 2)")
    ap.add_argument("--malloc", choices=("tuned", "dask", "both"), default="both",
                    help="worker malloc settings: local_cluster's (tuned), dask's (dask), or both (default)")
    ap.add_argument("--baseline", action=argparse.BooleanOptionalAction, default=True,
                    help="also time a plain multiprocessing pool (default: yes)")
    ap.add_argument("--output", default=str(pathlib.Path(__file__).resolve().parent / "results" / "python_batch.md"))
    args = ap.parse_args()

    import dask
    import distributed
    import simdverlet as sv

    params = [{"n": args.size, "frames": args.frames, "substeps": args.substeps, "stiffness": 500.0 + 100.0 * k,
               "friction": 0.2 + 0.6 * (k % 4) / 3} for k in range(args.runs)]

    load_before = loadavg()
    start = time.perf_counter()
    reference = drape(params[0], None)
    serial_one = time.perf_counter() - start

    makers = []
    for m in (("tuned", "dask") if args.malloc == "both" else (args.malloc,)):
        makers += [lambda w=w, m=m: DaskSetup(w, m) for w in (1, 2)]
    if args.baseline:
        makers += [lambda w=w: PoolSetup(w) for w in (1, 2)]

    setups = []
    try:
        for make in makers:
            s = make()
            s(params[:s.workers])  # warm-up: imports, one run per worker
            s.times, s.results = [], None
            setups.append(s)
        for r in range(args.rounds):
            for s in (setups if r % 2 == 0 else setups[::-1]):
                t = time.perf_counter()
                s.results = s(params)
                s.times.append(time.perf_counter() - t)
                print(f"round {r + 1}: {s.label}: {s.times[-1]:.2f} s", file=sys.stderr, flush=True)
    finally:
        for s in setups:
            s.close()
    load_after = loadavg()

    first = setups[0].results
    identical = (first[0]["positions"].tobytes() == reference["positions"].tobytes() and
                 all(a["positions"].tobytes() == b["positions"].tobytes() and a["contacts"] == b["contacts"]
                     for s in setups for a, b in zip(first, s.results)))

    def best(s):
        return min(s.times)

    def one_worker(s):
        return next(o for o in setups if type(o) is type(s) and o.malloc == s.malloc and o.workers == 1)

    rows = [f"| setup | workers | worker malloc | start | batch wall time (best of {args.rounds}) | all rounds "
            "| runs/s | 2 vs 1 |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for s in setups:
        rows.append(f"| {s.label} | {s.workers} | {s.malloc_label} | {s.started:.2f} s | {best(s):.2f} s | "
                    f"{', '.join(f'{t:.2f}' for t in s.times)} s | {args.runs / best(s):.2f} | "
                    f"{best(one_worker(s)) / best(s):.2f}x |")
    table = "\n".join(rows)

    main1, main2 = setups[0], setups[1]
    ratio = best(main1) / best(main2)
    notes = [f"2 workers vs 1 ({main1.label.split(', ', 1)[1]} vs {main2.label.split(', ', 1)[1]}): "
             f"**{ratio:.2f}x** (target >= 1.7x)."]
    dask_default = [s for s in setups if isinstance(s, DaskSetup) and s.malloc == "dask"]
    tuned = [s for s in setups if isinstance(s, DaskSetup) and s.malloc == "tuned"]
    if dask_default and tuned:
        notes.append(f"dask's own malloc setting costs {best(dask_default[0]) / best(tuned[0]):.2f}x the time "
                     f"with 1 worker and {best(dask_default[1]) / best(tuned[1]):.2f}x with 2.")
    pools = [s for s in setups if isinstance(s, PoolSetup)]
    if pools and tuned:
        notes.append(f"The plain process pool, no dask: {best(pools[0]) / best(pools[1]):.2f}x from 1 to 2 processes; "
                     f"dask's batch takes {best(tuned[0]) / best(pools[0]):.2f}x the pool's time with 1 worker, "
                     f"{best(tuned[1]) / best(pools[1]):.2f}x with 2.")
    per_run = best(main1) / args.runs

    cmd = "PYTHONPATH=" + os.environ.get("PYTHONPATH", "") + " " + shlex.join([sys.executable] + sys.argv)
    text = f"""# Benchmark result: python_batch

- command: `{cmd}`
- scene: {args.runs} drapes, each a {args.size} x {args.size} float32 sheet dropped on a ball for {args.frames} frames \
(8 iterations, {args.substeps} substeps); one drape alone in this process: {serial_one:.2f} s, \
{per_run:.2f} s per drape in the 1-worker batch
- setups: worker processes with 1 thread each, started and warmed up before timing; rounds alternate between the setups
- Python {platform.python_version()}, numpy {np.__version__}, dask {dask.__version__}, distributed {distributed.__version__}, \
simdverlet module `{pathlib.Path(sv.__file__).parent}`
- CPU: {cpu_model()}, {os.cpu_count()} cores visible; load average (1 min) before the run: {load_before}, \
after: {load_after} (the batches themselves keep up to 2 cores busy)
- date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%MZ')}
- results of every setup byte-identical (and equal to the drape run in this process): {'yes' if identical else 'NO'}; \
diverged runs: {sum(r["diverged"] for r in first)}

{table}

{' '.join(notes)}
"""
    print(text)
    out = pathlib.Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(f"wrote {out}", file=sys.stderr)
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
