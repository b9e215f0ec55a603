"""simdverlet.batch: runs on dask.distributed give the same bytes as serial runs, survive a killed
worker, work through real dask-scheduler / dask-worker processes, and report failures by their
parameter set.

The scenes are small simdverlet drapes (a 16 x 16 sheet dropped on a ball for 30 frames; the
kill test's is a 96 x 96 sheet run for about a second), so the file stays well inside a minute and
a half on two cores (about 15-20 s on the 2-core machine it was written on).  The scenes are
module-level functions, pickled by reference, so the worker processes import this file: the
LocalCluster workers inherit this process's sys.path, the dask-worker processes get it as
PYTHONPATH.
"""

from __future__ import annotations

import multiprocessing
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

import pytest

np = pytest.importorskip("numpy")
distributed = pytest.importorskip("distributed")
import simdverlet as sv  # noqa: E402  (the module under test: a missing build is an error, not a skip)
from simdverlet import batch  # noqa: E402

SPACING = 0.25


# --------------------------------------------------------------------------------------------------
# Scenes


def drape(p, out):
    """A p["n"] x p["n"] sheet (default 16) dropped flat on a ball for p["frames"] frames.

    Returns the final coordinates, the contact count per frame and a snapshot of the whole
    simulation; writes an OBJ of the sheet every 10 frames under `out`.  When p["marker"] names a
    folder, touches start-<k>-<pid> there before stepping and end-<k>-<pid> after (the kill test
    watches these).
    """
    n = p.get("n", 16)
    marker = p.get("marker")
    tag = f"{p.get('k', 0)}-{os.getpid()}"
    if marker:
        pathlib.Path(marker, f"start-{tag}").touch()
    sim = sv.Simulation64() if p.get("double") else sv.Simulation()
    cloth = sim.add_cloth(width=n, height=n, spacing=SPACING, stiffness=p["stiffness"],
                          position=lambda c, r: (c * SPACING, 0.0, r * SPACING))
    half = (n - 1) * SPACING / 2
    world = sim.add_colliders()
    ball = world.add_sphere(center=(half, 1.2, half), radius=0.25 * n * SPACING + 0.2,
                            friction=p["friction"])
    contacts = []
    for frame in range(1, p["frames"] + 1):
        sim.step(gravity=(0, 9.81, 0), iterations=p.get("iterations", 8), substeps=p.get("substeps", 1))
        contacts.append(ball.contacts())
        if out is not None and frame % 10 == 0:
            sv.write_obj(str(out / f"frame-{frame:04d}.obj"), cloth.render_mesh())
    if marker:
        pathlib.Path(marker, f"end-{tag}").touch()
    return {
        "x": np.array(sim.x, copy=True),
        "y": np.array(sim.y, copy=True),
        "z": np.array(sim.z, copy=True),
        "positions": sim.positions(),
        "contacts": np.array(contacts, dtype=np.int64),
        "snapshot": sim.save(),
        "steps": sim.step_count(),
        "diverged": sim.diverged(),
    }


def echo(p, out):
    """Stand-in for the order tests: returns its parameters and the folder it was given."""
    if out is not None:
        (out / "params.txt").write_text(repr(sorted(p.items())))
    return dict(p), out


def flaky(p, out):
    """Raises for p["bad"]; every attempt touches a file in p["attempts"] first."""
    pathlib.Path(p["attempts"], f"attempt-{p['k']}-{time.monotonic_ns()}").touch()
    if p.get("bad"):
        raise ValueError(f"bad stiffness {p['stiffness']}")
    return p["k"]


# --------------------------------------------------------------------------------------------------
# Helpers


def assert_same_bytes(got, want):
    """Results equal byte for byte: arrays by tobytes() (and dtype/shape), the rest by ==."""
    assert type(got) is type(want)
    if isinstance(want, np.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes()
    elif isinstance(want, dict):
        assert list(got) == list(want)
        for key in want:
            assert_same_bytes(got[key], want[key])
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for a, b in zip(got, want):
            assert_same_bytes(a, b)
    elif isinstance(want, float):
        assert np.float64(got).tobytes() == np.float64(want).tobytes()
    else:
        assert got == want


def pythonpath():
    """This process's import path, for processes that must import simdverlet and this file."""
    here = str(pathlib.Path(__file__).resolve().parent)
    entries = [here] + [p for p in sys.path if p and os.path.isdir(p)]
    return os.pathsep.join(dict.fromkeys(entries))


@pytest.fixture(scope="module")
def client():
    """A two-worker LocalCluster (one thread each, batch.local_cluster) shared by the tests of this file."""
    with batch.local_cluster(2) as cluster:
        with distributed.Client(cluster) as c:
            c.wait_for_workers(2, timeout=60)
            yield c


# --------------------------------------------------------------------------------------------------
# Parameter sets


def test_grid_order_last_key_fastest():
    g = batch.grid(stiffness=[10, 20], friction=[0.0, 0.5, 1.0], frames=30)
    assert g == [{"stiffness": s, "friction": f, "frames": 30}
                 for s in (10, 20) for f in (0.0, 0.5, 1.0)]
    assert [list(p) for p in g] == [["stiffness", "friction", "frames"]] * 6
    # a dict of lists given to run_serial is the same grid, in the same order
    assert [r[0] for r in batch.run_serial(echo, {"stiffness": [10, 20],
                                                  "friction": [0.0, 0.5, 1.0], "frames": 30})] == g
    # numpy axes and ranges are axes, tuples and strings are fixed values; entries untouched
    g = batch.grid(a=np.array([1.5, 2.5], dtype=np.float32), b=range(2), c=(1, 2), d="xy")
    assert len(g) == 4 and all(p["c"] == (1, 2) and p["d"] == "xy" for p in g)
    assert [type(p["a"]) for p in g] == [np.float32] * 4
    assert [(float(p["a"]), p["b"]) for p in g] == [(1.5, 0), (1.5, 1), (2.5, 0), (2.5, 1)]
    assert batch.grid(a=[1, 2], b=[]) == []
    assert batch.grid(frames=30) == [{"frames": 30}]
    with pytest.raises(TypeError, match=r"params\[1\]"):
        batch.run_serial(echo, [{"a": 1}, 2])


def test_run_order_and_out_folders(client, tmp_path):
    params = batch.grid(a=[3, 1, 2], b=["x", "y"])
    got = batch.run(echo, params, client, out=tmp_path / "batch", progress=False)
    assert [r[0] for r in got] == params
    assert [r[1] for r in got] == [(tmp_path / "batch" / f"run-{k:05d}").absolute() for k in range(6)]
    for k, p in enumerate(params):
        assert (tmp_path / "batch" / f"run-{k:05d}" / "params.txt").read_text() == repr(sorted(p.items()))
    # identical parameter sets are separate runs, each with its own folder
    got = batch.run(echo, [{"a": 1}] * 3, client, out=tmp_path / "same", progress=False)
    assert [r[1].name for r in got] == ["run-00000", "run-00001", "run-00002"]
    assert batch.run(echo, [], client) == []


# --------------------------------------------------------------------------------------------------
# Bit identity


def test_local_cluster_matches_serial_bytes(client, tmp_path):
    # a grid of 6 float32 runs plus 2 float64 runs from an explicit list
    params = batch.grid(stiffness=[20.0, 80.0, 300.0], friction=[0.0, 0.6], frames=30)
    params += [{"stiffness": 50.0, "friction": 0.3, "frames": 30, "double": True},
               {"stiffness": 50.0, "friction": 0.3, "frames": 30, "double": True}]
    want = batch.run_serial(drape, params, out=tmp_path / "serial")
    got = batch.run(drape, params, client, out=tmp_path / "dask", progress=True)
    assert len(got) == len(params)
    for g, w in zip(got, want):
        assert_same_bytes(g, w)
        assert not w["diverged"] and w["steps"] == 30
    assert want[0]["x"].dtype == np.float32 and want[-1]["x"].dtype == np.float64
    assert any(w["contacts"][-1] > 0 for w in want)  # the sheet reaches the ball
    # different parameters give different bits (the comparison is not trivially true)
    assert want[0]["positions"].tobytes() != want[2]["positions"].tobytes()
    # the OBJ frames written on the workers are the serial ones, byte for byte
    serial = sorted(p.relative_to(tmp_path / "serial") for p in (tmp_path / "serial").rglob("*.obj"))
    assert len(serial) == 3 * len(params)
    assert serial == sorted(p.relative_to(tmp_path / "dask") for p in (tmp_path / "dask").rglob("*.obj"))
    for rel in serial:
        assert (tmp_path / "dask" / rel).read_bytes() == (tmp_path / "serial" / rel).read_bytes()


def test_run_starts_and_closes_its_own_cluster():
    params = batch.grid(stiffness=[40.0, 160.0], friction=[0.2, 0.8], frames=30)
    before = {p.pid for p in multiprocessing.active_children()}
    got = batch.run(drape, params, workers=2, progress=False)
    for g, w in zip(got, batch.run_serial(drape, params)):
        assert_same_bytes(g, w)
    deadline = time.monotonic() + 10
    while {p.pid for p in multiprocessing.active_children()} - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not {p.pid for p in multiprocessing.active_children()} - before, "worker processes left running"


# --------------------------------------------------------------------------------------------------
# Failures


def test_failing_scene_names_its_parameter_set(client, tmp_path):
    params = [{"k": k, "stiffness": 10.0 * (k + 1), "attempts": str(tmp_path), "bad": k == 2}
              for k in range(4)]
    with pytest.raises(batch.BatchError) as info:
        batch.run(flaky, params, client, progress=False, retries=2)
    message = str(info.value)
    assert "parameter set 2" in message and repr(params[2]) in message
    assert "bad stiffness 30.0" in message and "ValueError" in message
    assert info.value.index == 2 and info.value.params == params[2]
    assert isinstance(info.value.__cause__, ValueError)
    # retries=2: the failing set ran three times in all
    assert len(list(tmp_path.glob("attempt-2-*"))) == 3
    # serially: same error, no retry
    for f in tmp_path.iterdir():
        f.unlink()
    with pytest.raises(batch.BatchError, match=r"parameter set 2: \{'k': 2"):
        batch.run_serial(flaky, params)
    assert len(list(tmp_path.glob("attempt-2-*"))) == 1


def crash(p, out):
    """Kills its own worker process for p["crash"] (a segfault, an out-of-memory kill)."""
    if p.get("crash"):
        os.kill(os.getpid(), signal.SIGKILL)
    return p["k"]


def test_scene_that_kills_its_worker_fails_with_its_parameter_set():
    # on the cluster run() starts, retries=1 also means one worker death survived, the second fatal
    with pytest.raises(batch.BatchError) as info:
        batch.run(crash, [{"k": 0}, {"k": 1, "crash": True}, {"k": 2}], workers=2, progress=False, retries=1)
    assert info.value.index == 1 and "parameter set 1: {'k': 1, 'crash': True}" in str(info.value)
    assert "workers kept dying" in str(info.value)
    assert isinstance(info.value.__cause__, distributed.KilledWorker)


def test_given_client_is_not_closed(client):
    assert batch.run(echo, [{"a": 1}, {"a": 2}], client, progress=False)[1][0] == {"a": 2}
    assert client.status == "running"
    assert client.submit(sum, [1, 2, 3]).result() == 6
    assert len(client.scheduler_info()["workers"]) == 2
    with pytest.raises(ValueError, match="workers="):
        batch.run(echo, [{"a": 1}], client, workers=2)


def test_local_cluster_workers(client):
    info = client.scheduler_info()["workers"].values()
    assert [w["nthreads"] for w in info] == [1, 1]
    assert all(w["host"] == "127.0.0.1" for w in info)
    env = client.run(lambda: (os.environ.get("MALLOC_TRIM_THRESHOLD_"), os.environ.get("MALLOC_MMAP_THRESHOLD_")))
    assert set(env.values()) == {(str(128 << 20), str(32 << 20))}


KILL_SCENE = {"n": 96, "substeps": 4, "friction": 0.5}


def calibrated_frames(seconds):
    """Frames of the kill test's drape (96 x 96, 4 substeps) that take about `seconds` here."""
    def timed(frames):
        start = time.perf_counter()
        drape(dict(KILL_SCENE, stiffness=60.0, frames=frames), None)
        return time.perf_counter() - start

    setup = timed(0)  # building the sheet and the ball
    per_frame = max(timed(200) - setup, 1e-6) / 200
    return int(min(20000, max(40, (seconds - setup) / per_frame)))


def test_worker_killed_mid_task_costs_a_retry_not_a_result(client, tmp_path):
    frames = calibrated_frames(1.0)
    marker = tmp_path / "markers"
    marker.mkdir()
    params = [dict(KILL_SCENE, k=k, stiffness=30.0 * (k + 1), frames=frames, marker=str(marker))
              for k in range(4)]
    want = batch.run_serial(drape, params)
    for f in marker.iterdir():
        f.unlink()

    pids = set(client.run(os.getpid).values())
    assert len(pids) == 2
    killed = {}

    def killer():
        # kill the first worker seen running a drape, while it runs (no end marker yet)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            for start in sorted(marker.glob("start-*")):
                k, pid = (int(v) for v in start.name.split("-")[1:])
                if pid in pids and not (marker / f"end-{k}-{pid}").exists():
                    time.sleep(0.2)
                    if not (marker / f"end-{k}-{pid}").exists():
                        os.kill(pid, signal.SIGKILL)
                        killed.update(k=k, pid=pid)
                        return
            time.sleep(0.02)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    got = batch.run(drape, params, client, progress=False)
    thread.join(timeout=5)

    assert killed, "no worker was killed: the test did not test anything"
    k, pid = killed["k"], killed["pid"]
    assert not (marker / f"end-{k}-{pid}").exists(), "the killed worker finished its run anyway"
    reruns = [f for f in marker.glob(f"start-{k}-*") if f.name != f"start-{k}-{pid}"]
    assert reruns, "the killed worker's run was not run again"
    client.wait_for_workers(2, timeout=30)  # the nanny restarts the killed worker
    assert pid not in set(client.run(os.getpid).values())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    for g, w in zip(got, want):
        assert_same_bytes(g, w)


# --------------------------------------------------------------------------------------------------
# Real components: dask-scheduler and dask-worker processes


def stop(procs):
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def test_cli_scheduler_and_workers(tmp_path):
    env = dict(os.environ, PYTHONPATH=pythonpath(), PYTHONUNBUFFERED="1")
    file = tmp_path / "scheduler.json"
    # The distribution's dask-scheduler and dask-worker commands, the ones beside this interpreter
    # (/usr/bin for /usr/bin/python3), not whichever PATH finds first, which may belong to another
    # Python; where an install has no such scripts, the same main() through `python -m`.
    def cli(command, module):
        script = pathlib.Path(sys.executable).parent / command
        return [str(script)] if script.exists() else [sys.executable, "-m", module]

    scheduler_cli = cli("dask-scheduler", "distributed.cli.dask_scheduler")
    worker_cli = cli("dask-worker", "distributed.cli.dask_worker")
    procs = []
    logs = []

    def spawn(args, name):
        log = open(tmp_path / f"{name}.log", "w")
        logs.append(log)
        procs.append(subprocess.Popen(args, env=env, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT))

    try:
        spawn(scheduler_cli + ["--host", "127.0.0.1", "--port", "0",
                         "--no-dashboard", "--scheduler-file", str(file)], "scheduler")
        deadline = time.monotonic() + 60
        while not file.exists() and time.monotonic() < deadline:
            assert procs[0].poll() is None, (tmp_path / "scheduler.log").read_text()
            time.sleep(0.1)
        assert file.exists(), "dask-scheduler wrote no scheduler file"
        for w in range(2):
            spawn(worker_cli + ["--scheduler-file", str(file), "--nthreads", "1",
                             "--nworkers", "1", "--no-dashboard", "--local-directory", str(tmp_path / f"w{w}")],
                  f"worker{w}")
        with distributed.Client(scheduler_file=str(file), timeout=30) as c:
            address = c.scheduler.address
            c.wait_for_workers(2, timeout=60)
            assert len(c.scheduler_info()["workers"]) == 2
        params = batch.grid(stiffness=[25.0, 100.0], friction=[0.1, 0.9], frames=30)
        got = batch.run(drape, params, address, progress=False)
        for g, w in zip(got, batch.run_serial(drape, params)):
            assert_same_bytes(g, w)
        # the runs did happen on the worker processes
        with distributed.Client(address, timeout=30) as c:
            pids = set(c.run(os.getpid).values())
        assert len(pids) == 2 and os.getpid() not in pids
    except BaseException:
        for log in logs:
            log.flush()
        for name in sorted(tmp_path.glob("*.log")):
            print(f"--- {name.name}\n{name.read_text()[-3000:]}", file=sys.stderr)
        raise
    finally:
        stop(procs[1:])  # workers first, then the scheduler
        stop(procs[:1])
        for log in logs:
            log.close()
