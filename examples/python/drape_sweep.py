"""drape_sweep: a square sheet dropped flat on a ball resting on the floor, swept over stiffness x friction.

The sheet, 1.6 units across, starts flat 0.05 above the top of a ball of radius 1 that stands on
the floor, and falls onto it for 5 seconds (300 frames at 60 Hz, 8 substeps each).  Every combination of 8 stiffnesses and 4 friction coefficients (32 runs) is one simulation; the
runs go through simdverlet.batch.run, which spreads them over worker processes of a dask
LocalCluster (or the cluster at --scheduler).  For each run the script records

* sag: how far the sheet's four corners hang below the top of the ball, in world units, averaged
  over the corners at the last frame: mean(corner y) - (ball centre y - radius).  +y points down,
  so a positive sag is below the top.  A stiff (barely stretching) sheet wraps the ball like
  paper and its corners hang about 0.7 below the top; a soft one stretches and its corners reach
  the floor (sag 2.0, the ball's diameter); a sheet that slid off the ball lies on the floor
  (sag 2.0 too, and no ball contacts: without friction the top of a ball is no place to stay);
* lowest: the same for the lowest particle of the whole sheet (the deepest point of any edge);
* ball_contacts, floor_contacts: particles touching the ball / the floor at the last frame, and
  ball_contacts_mean, the ball's mean over the last 30 frames.

It writes table.csv (one row per run) and sag_vs_stiffness.png (sag against stiffness, one line
per friction) to --out, and prints the table as markdown.

    build/python-venv/bin/python examples/python/drape_sweep.py --workers 2

The `if __name__ == "__main__":` guard is required: the worker processes are spawned, and they
import this file again to find `drape`.
"""

from __future__ import annotations

import argparse
import csv
import os
import pathlib
import sys
import time

import numpy as np

import simdverlet as sv
from simdverlet import batch

STIFFNESSES = [62.5 * 2**k for k in range(8)]  # 62.5 ... 8000
FRICTIONS = [0.0, 0.25, 0.5, 1.0]
WIDTH = 1.6  # the sheet's side, whatever --size
RADIUS = 1.0
GAP = 0.05  # between the sheet and the top of the ball at the start


def drape(p: dict, out: pathlib.Path | None) -> dict:
    """One run: a p["size"] x p["size"] sheet dropped from y = 0 onto a ball standing on the floor."""
    n = p["size"]
    spacing = WIDTH / (n - 1)
    sim = sv.Simulation()
    cloth = sim.add_cloth(width=n, height=n, spacing=spacing, stiffness=p["stiffness"],
                          position=lambda c, r: (c * spacing, 0.0, r * spacing))
    half = WIDTH / 2
    center = (half, GAP + RADIUS, half)  # +y is down: the ball's top at y = GAP, under the sheet
    world = sim.add_colliders()
    ball = world.add_sphere(center=center, radius=RADIUS, friction=p["friction"])
    floor = world.add_plane(normal=(0, -1, 0), offset=-(GAP + 2 * RADIUS), friction=0.5)
    contacts = []
    for _ in range(p["frames"]):
        # stiffness x iterations up to 64000 needs the step split in 8 to stay stable
        sim.step(dt=1 / 60, gravity=(0, 9.81, 0), iterations=8, substeps=p["substeps"])
        contacts.append(ball.contacts())
    if out is not None:
        sv.write_obj(str(out / "final.obj"), cloth.render_mesh())
    top = center[1] - RADIUS
    y = np.asarray(sim.y)[cloth.base():cloth.base() + cloth.count()]
    corners = [cloth.index((c, r)) for c in (0, n - 1) for r in (0, n - 1)]
    corner_y = np.asarray(sim.y)[corners]
    return {
        "stiffness": p["stiffness"],
        "friction": p["friction"],
        "sag": float(corner_y.mean() - top),
        "lowest": float(y.max() - top),
        "ball_contacts": contacts[-1],
        "floor_contacts": floor.contacts(),
        "ball_contacts_mean": float(np.mean(contacts[-30:])),
        "diverged": bool(sim.diverged()),
    }


def markdown(rows: list[dict]) -> str:
    """Stiffness down, friction across; each cell 'sag (ball contacts)'."""
    frictions = sorted({r["friction"] for r in rows})
    by = {(r["stiffness"], r["friction"]): r for r in rows}
    lines = ["| stiffness | " + " | ".join(f"friction {f:g}: sag (ball contacts)" for f in frictions) + " |",
             "| ---: | " + " | ".join("---:" for _ in frictions) + " |"]
    for s in sorted({r["stiffness"] for r in rows}):
        cells = []
        for f in frictions:
            r = by[(s, f)]
            cells.append(f"{r['sag']:.3f} ({r['ball_contacts']})" + (" diverged" if r["diverged"] else ""))
        lines.append(f"| {s:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(rows: list[dict], path: pathlib.Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    for f in sorted({r["friction"] for r in rows}):
        line = sorted((r["stiffness"], r["sag"], r["ball_contacts"]) for r in rows if r["friction"] == f)
        (drawn,) = ax.plot([s for s, _, _ in line], [v for _, v, _ in line], marker="o", label=f"friction {f:g}")
        off = [(s, v) for s, v, c in line if c == 0]  # slid off the ball: drawn hollow
        ax.plot([s for s, _ in off], [v for _, v in off], ls="none", marker="o", mfc="white", color=drawn.get_color())
    ax.set_xscale("log", base=2)
    stiffnesses = sorted({r["stiffness"] for r in rows})
    ax.set_xticks(stiffnesses, [f"{v:g}" for v in stiffnesses])
    ax.minorticks_off()
    ax.axhline(2 * RADIUS, color="gray", lw=0.8, ls="--")
    ax.annotate("corners on the floor", (rows[0]["stiffness"], 2 * RADIUS), textcoords="offset points",
                xytext=(4, -12), color="gray", fontsize=8)
    ax.set_xlabel("stiffness (per slot; the sheet feels stiffness x 8 iterations)")
    ax.set_ylabel("sag: corners below the ball's top (world units)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(title="hollow: no longer on the ball", title_fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main() -> int:
    ap = argparse.ArgumentParser(description="A sheet dropped on a ball, swept over stiffness x friction.")
    ap.add_argument("--out", default="build/drape_sweep", help="output folder (default build/drape_sweep/)")
    ap.add_argument("--workers", type=int, default=os.cpu_count(),
                    help="worker processes of the local cluster (default: the CPU count)")
    ap.add_argument("--frames", type=int, default=300, help="frames per run, 60 per second (default 300)")
    ap.add_argument("--substeps", type=int, default=8, help="substeps per frame (default 8)")
    ap.add_argument("--size", type=int, default=48, help="the sheet is SIZE x SIZE particles (default 48)")
    ap.add_argument("--scheduler", default=None,
                    help="address of a running dask scheduler (tcp://host:8786) instead of a local cluster")
    ap.add_argument("--meshes", action="store_true", help="also write each run's final sheet as OBJ under OUT/runs/")
    args = ap.parse_args()

    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # the grid: stiffness slowest, friction fastest (simdverlet.batch.grid's order)
    params = {"stiffness": STIFFNESSES, "friction": FRICTIONS, "frames": args.frames,
              "substeps": args.substeps, "size": args.size}
    start = time.perf_counter()
    rows = batch.run(drape, params, client=args.scheduler, workers=None if args.scheduler else args.workers,
                     out=out / "runs" if args.meshes else None)
    elapsed = time.perf_counter() - start

    with open(out / "table.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        # float32 results print as their shortest float32 form, not as 17-digit doubles
        writer.writerows({k: f"{v:.7g}" if isinstance(v, float) else v for k, v in r.items()} for r in rows)
    title = (f"{args.size} x {args.size} sheet, {WIDTH:g} wide, on a ball of radius {RADIUS:g}, "
             f"{args.frames} frames x {args.substeps} substeps")
    plot(rows, out / "sag_vs_stiffness.png", title)

    print(f"{len(rows)} runs in {elapsed:.1f} s ({title})\n")
    print(markdown(rows))
    print(f"\nwrote {out / 'table.csv'} and {out / 'sag_vs_stiffness.png'}")
    return 1 if any(r["diverged"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
