"""The Python examples of the README and docs/guide.md run as printed."""

import os
import pathlib
import re

import numpy as np

SOURCE = pathlib.Path(os.environ.get("SIMDVERLET_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))


def test_the_readme_python_example_runs_and_the_sheet_rests_on_the_ball():
    text = (SOURCE / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1
    scope = {}
    exec(compile(blocks[0], "README.md", "exec"), scope)
    sim, ball = scope["sim"], scope["ball"]
    assert ball.contacts() > 0 and not sim.diverged()
    centre = np.array([4.0, 6.0, 0.0])
    assert np.linalg.norm(sim.positions() - centre, axis=1).min() >= 2.0 - 1e-4


def test_the_guides_python_example_runs_and_writes_its_obj(tmp_path, monkeypatch):
    text = (SOURCE / "docs" / "guide.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks
    monkeypatch.chdir(tmp_path)
    scope = {}
    exec(compile(blocks[0], "docs/guide.md", "exec"), scope)
    sim, ball = scope["sim"], scope["ball"]
    assert ball.contacts() > 0 and not sim.diverged()
    obj = (tmp_path / "drape.obj").read_text().splitlines()
    assert sum(line.startswith("v ") for line in obj) == 24 * 24
