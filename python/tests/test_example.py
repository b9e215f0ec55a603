"""examples/python/drape_sweep.py runs through simdverlet.batch and writes its table and plot."""

import csv
import os
import pathlib
import subprocess
import sys

import pytest

SOURCE = pathlib.Path(os.environ.get("SIMDVERLET_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))


def test_the_drape_sweep_writes_32_runs_and_a_plot(tmp_path):
    pytest.importorskip("distributed")
    pytest.importorskip("matplotlib")
    script = SOURCE / "examples" / "python" / "drape_sweep.py"
    # A short sweep: the whole 8 x 4 grid on a small sheet, a few frames, two workers.
    subprocess.run([sys.executable, str(script), "--out", str(tmp_path), "--size", "12", "--frames", "20",
                    "--workers", "2"], check=True, cwd=tmp_path, env=dict(os.environ), timeout=300,
                   stdout=subprocess.DEVNULL)
    with open(tmp_path / "table.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 32
    assert {float(r["stiffness"]) for r in rows} == {62.5 * 2**k for k in range(8)}
    assert all(float(r["sag"]) == float(r["sag"]) for r in rows)  # measured, not NaN
    png = (tmp_path / "sag_vs_stiffness.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 10_000
