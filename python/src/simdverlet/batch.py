"""Run many simulations, one per parameter set, on a dask.distributed cluster.

A *batch* is one scene run once for each of many parameter sets: a drape swept over stiffness and
friction, a flag over wind speeds, the same garment over seeds.  Every run is independent, so the
batch spreads over processes (and machines) with ``dask.distributed``; this module does the
bookkeeping: it starts a cluster or uses yours, submits one task per parameter set, shows
progress, survives lost workers, and hands the results back in the order of the parameter sets.

The scene
---------
A scene is a picklable callable ``scene(params, out) -> result``:

* ``params`` is one parameter set, a ``dict`` (the scene gets its own copy);
* ``out`` is ``None``, or, when :func:`run` was given ``out=``, an absolute :class:`pathlib.Path`
  naming this run's own folder, ``<out>/run-00000``, ``<out>/run-00001``, ... numbered by
  parameter-set index, created before the scene is called;
* ``result`` is anything picklable: numbers, numpy arrays, dicts and lists of those.

The scene must build its simulation from ``params`` alone (no state shared between runs), and
should write its files under fixed names (``frame-0001.obj``, ...): a run that is retried after a
lost worker writes into the same folder again and overwrites what the lost attempt left.

Functions defined in a script's ``__main__`` are shipped to the workers by value (cloudpickle);
functions defined in an importable module are shipped by reference, and the workers must be able
to import that module (``PYTHONPATH``).  Scripts that use :func:`run` with its own cluster need an
``if __name__ == "__main__":`` guard, because the worker processes are spawned and import the
script's main module again.

Bit-identical results
---------------------
:func:`run` does not touch the numbers a scene returns: results travel from the worker back to
this process by pickle, which stores floats and numpy arrays byte for byte.  A deterministic scene
therefore gives exactly the same bytes under :func:`run` as under :func:`run_serial` (on machines
with the same CPU features and the same build of the module).

Parameter grids
---------------
``params`` is either a list of dicts, one per run, or a dict describing a grid, expanded by
:func:`grid`: values that are lists, ranges or 1-D numpy arrays are axes; every other value
(numbers, strings, tuples, dicts, ...) is held fixed in every run.  The grid is the cartesian
product of the axes in the order the keys appear, the **last key varying fastest**::

    >>> grid(stiffness=[10, 20], friction=[0.0, 0.5])
    [{'stiffness': 10, 'friction': 0.0}, {'stiffness': 10, 'friction': 0.5},
     {'stiffness': 20, 'friction': 0.0}, {'stiffness': 20, 'friction': 0.5}]

so result ``k`` belongs to ``grid(...)[k]``, and ``np.array(results).reshape(2, 2)`` is indexed
``[stiffness, friction]``.

Failures and retries
--------------------
Each task is submitted with ``retries``: a scene that raises is run again up to ``retries`` times
(dask cannot tell a transient error from a deterministic one).  A worker that dies while running a
task (killed, out of memory, its machine gone) does not lose the result either: the scheduler
reschedules the task on another worker, and :func:`run` keeps waiting until every result is in.
The scheduler gives up on a task only when more than ``distributed.scheduler.allowed-failures``
workers died while running it (dask's default is 3; on the cluster :func:`run` starts itself the
limit is ``retries``, so that ``retries`` counts both kinds of failure).  When a task ultimately
fails, :func:`run` cancels the rest and raises :class:`BatchError` naming the parameter-set index
and the dict, with the scene's own exception (and its remote traceback) chained as ``__cause__``.

Clusters
--------
``run(scene, params)`` starts a :func:`local_cluster` (one single-threaded worker process per CPU),
runs the batch and closes it.  Give it a ``distributed.Client`` to use a cluster you manage (it
stays open), or a scheduler address (``"tcp://host:8786"``, e.g. of ``dask-scheduler`` with
``dask-worker`` processes on other machines, which must be able to import simdverlet and the
scene).  :func:`run_serial` runs the same batch in this process without dask.

Identical parameter sets are *not* merged: every entry of ``params`` is one task with its own key
(and its own output folder), even when two entries are equal; deduplicate ``params`` yourself if
you want one run per distinct set.

Example
-------
::

    import numpy as np
    import simdverlet as sv
    from simdverlet import batch

    def drape(p, out):
        # a 32 x 32 sheet, 1.55 across, dropped on a ball of radius 1 (+y is down)
        sim = sv.Simulation()
        cloth = sim.add_cloth(width=32, height=32, spacing=0.05, stiffness=p["stiffness"],
                              position=lambda c, r: (c * 0.05, 0.0, r * 0.05))
        ball = sim.add_colliders().add_sphere(center=(0.775, 1.05, 0.775), radius=1.0,
                                              friction=p["friction"])
        for frame in range(p["frames"]):
            sim.step(gravity=(0, 9.81, 0), substeps=8)
            if out is not None and frame % 30 == 29:
                sv.write_obj(str(out / f"frame-{frame + 1:04d}.obj"), cloth.render_mesh())
        return {"positions": sim.positions(), "contacts": ball.contacts()}

    if __name__ == "__main__":
        grid = {"stiffness": [250.0, 1000.0, 4000.0], "friction": [0.25, 1.0], "frames": 180}
        results = batch.run(drape, grid, out="build/drapes")   # 6 runs, stiffness-major
        lowest = np.array([r["positions"][:, 1].max() for r in results]).reshape(3, 2)  # [stiffness, friction]
"""

from __future__ import annotations

import itertools
import os
import pathlib
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["BatchError", "grid", "local_cluster", "run", "run_serial"]


class BatchError(RuntimeError):
    """A run of the batch failed for good.

    Attributes
    ----------
    index : int
        Position of the failed parameter set in the (expanded) ``params`` list.
    params : dict
        The failed parameter set.

    The original exception (the scene's own, or dask's ``KilledWorker`` when workers kept dying
    while running it) is the ``__cause__``.
    """

    def __init__(self, message: str, index: int, params: Mapping[str, Any]):
        super().__init__(message)
        self.index = index
        self.params = dict(params)


# --------------------------------------------------------------------------------------------------
# Parameter sets


def _is_axis(value: Any) -> bool:
    if isinstance(value, (list, range)):
        return True
    ndim = getattr(value, "ndim", None)  # numpy arrays, without importing numpy here
    return ndim == 1 and hasattr(value, "__iter__")


def grid(**axes: Any) -> list[dict[str, Any]]:
    """The cartesian product of parameter axes, as a list of dicts, the last key varying fastest.

    Each keyword is one parameter.  A list, ``range`` or 1-D numpy array is an axis: the grid
    takes each of its values in turn.  Any other value (number, string, tuple, dict, ...) is held
    fixed in every parameter set.  The keys appear in every dict in the order given, and the
    parameter sets come in row-major order of the axes (like nested ``for`` loops written in
    keyword order, or ``itertools.product``)::

        >>> grid(a=[1, 2], b=["x", "y", "z"], frames=30)
        [{'a': 1, 'b': 'x', 'frames': 30}, {'a': 1, 'b': 'y', 'frames': 30},
         {'a': 1, 'b': 'z', 'frames': 30}, {'a': 2, 'b': 'x', 'frames': 30},
         {'a': 2, 'b': 'y', 'frames': 30}, {'a': 2, 'b': 'z', 'frames': 30}]

    Values are passed through untouched (a numpy array's entries stay numpy scalars).  An empty
    axis gives an empty grid; no axes at all give one parameter set, the fixed values.
    """
    keys = list(axes)
    choices = [list(v) if _is_axis(v) else [v] for v in axes.values()]
    return [dict(zip(keys, combo)) for combo in itertools.product(*choices)]


def _expand(params: Mapping[str, Any] | Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(params, Mapping):
        return grid(**params)
    if isinstance(params, (str, bytes)):
        raise TypeError("params must be a list of dicts or a dict of lists (a grid), not a string")
    out = []
    for k, p in enumerate(params):
        if not isinstance(p, Mapping):
            raise TypeError(f"params[{k}] is a {type(p).__name__}, not a dict: {p!r}")
        out.append(dict(p))
    return out


def _run_dir(out: pathlib.Path | None, k: int) -> pathlib.Path | None:
    return None if out is None else out / f"run-{k:05d}"


def _resolve_out(out: str | os.PathLike | None) -> pathlib.Path | None:
    if out is None:
        return None
    out = pathlib.Path(out).expanduser().absolute()
    out.mkdir(parents=True, exist_ok=True)
    return out


def _run_one(scene: Callable, params: dict, run_dir: pathlib.Path | None) -> Any:
    """The task a worker runs: make the run's folder, then the scene."""
    if run_dir is not None:
        run_dir.mkdir(parents=True, exist_ok=True)
    return scene(params, run_dir)


def _describe(k: int, p: Mapping[str, Any]) -> str:
    text = repr(dict(p))
    if len(text) > 2000:
        text = text[:2000] + " ...}"
    return f"parameter set {k}: {text}"


# --------------------------------------------------------------------------------------------------
# Progress


class _Progress:
    """A tqdm bar on stderr (plain periodic lines when tqdm is missing); never needs a tty."""

    def __init__(self, total: int, enabled: bool, desc: str = "simdverlet.batch"):
        self.bar = None
        self.enabled = enabled
        self.total = total
        self.done = 0
        self.last = 0.0
        if not enabled:
            return
        try:
            from tqdm.auto import tqdm
        except ImportError:
            tqdm = None
        if tqdm is not None:
            self.bar = tqdm(total=total, desc=desc, unit="run", file=sys.stderr, mininterval=0.5,
                            dynamic_ncols=True, leave=True)
        self.desc = desc

    def update(self) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.update(1)
        elif self.enabled:
            now = time.monotonic()
            if now - self.last > 2.0 or self.done == self.total:
                self.last = now
                print(f"{self.desc}: {self.done}/{self.total} runs", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


# --------------------------------------------------------------------------------------------------
# Running


def run_serial(scene: Callable[[dict, pathlib.Path | None], Any],
               params: Mapping[str, Any] | Iterable[Mapping[str, Any]],
               out: str | os.PathLike | None = None, *, progress: bool = False) -> list[Any]:
    """Run the batch in this process, one parameter set after the other, without dask.

    Same contract as :func:`run`: ``params`` is a list of dicts or a grid (dict of lists, see
    :func:`grid`), ``scene(params_k, out_k)`` is called with a copy of each parameter set and
    ``out_k = out / f"run-{k:05d}"`` (created) or ``None``, and the results come back as a list in
    the order of ``params``.  A scene that raises is not retried: :class:`BatchError` names the
    parameter set, with the scene's exception as its ``__cause__``.

    This is the reference :func:`run` is checked against (it must return the same bytes), and a
    fallback where no cluster can be started.
    """
    plist = _expand(params)
    root = _resolve_out(out)
    bar = _Progress(len(plist), progress)
    results = []
    try:
        for k, p in enumerate(plist):
            try:
                results.append(_run_one(scene, dict(p), _run_dir(root, k)))
            except Exception as exc:
                raise BatchError(f"scene {_name(scene)} failed for {_describe(k, p)}: "
                                 f"{type(exc).__name__}: {exc}", k, p) from exc
            bar.update()
    finally:
        bar.close()
    return results


def _name(scene: Callable) -> str:
    return getattr(scene, "__qualname__", None) or getattr(scene, "__name__", None) or repr(scene)


def _key_prefix(scene: Callable) -> str:
    name = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in _name(scene))
    return f"simdverlet-batch-{name[:40] or 'scene'}"


# glibc malloc settings of the worker processes local_cluster() starts (see its docstring)
_MALLOC_ENV = {"MALLOC_TRIM_THRESHOLD_": str(128 << 20), "MALLOC_MMAP_THRESHOLD_": str(32 << 20)}


def local_cluster(workers: int | None = None, *, retries: int = 3, tune_malloc: bool = True,
                  **kwargs: Any):
    """Start the ``distributed.LocalCluster`` that :func:`run` starts when given no client.

    ``workers`` worker processes (default ``os.cpu_count()``), one thread each, on 127.0.0.1
    only, without a dashboard (the scheduler's bare HTTP endpoint takes a free port rather than
    8787, so several clusters can run side by side).  ``retries`` becomes the scheduler's
    ``distributed.scheduler.allowed-failures``: how many worker deaths a task survives.  Further
    keyword arguments go to ``LocalCluster`` and override these choices.

    Use it to keep one cluster across several :func:`run` calls::

        with batch.local_cluster(4) as cluster, distributed.Client(cluster) as client:
            a = batch.run(scene, params_a, client)
            b = batch.run(scene, params_b, client)

    ``tune_malloc``: dask's nanny starts its workers with glibc's ``MALLOC_TRIM_THRESHOLD_=65536``
    so that freed memory goes back to the system at once; that also fixes glibc's mmap threshold
    at 128 KiB, so every array of a large sheet's state is its own ``mmap``, page-aligned: the
    structure-of-arrays then sit at one offset within a page and the step's streams of loads and
    stores compete for the same cache sets (a 256 x 256 sheet on a ball steps in about 1.4 times
    the time on the AMD EPYC this was measured on).  With ``tune_malloc`` (the default) the
    workers start with ``MALLOC_MMAP_THRESHOLD_`` = 32 MiB and ``MALLOC_TRIM_THRESHOLD_`` = 128 MiB
    instead: the arrays come from the heap at scattered offsets, and up to 128 MiB of freed heap
    stays with each worker.  (It changes nothing in the numbers a scene computes.)  A worker the
    nanny restarts later gets the same settings.  This process's ``os.environ`` is restored after
    the start, but the nanny writes its variables there again whenever it (re)spawns a worker, as
    dask does for its own settings.
    """
    import dask
    import distributed

    n = workers if workers is not None else (os.cpu_count() or 1)
    if n < 1:
        raise ValueError(f"workers must be >= 1, got {n}")
    options: dict[str, Any] = dict(
        n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None,
        scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"})
    options.update(kwargs)
    config: dict[str, Any] = {"distributed.scheduler.allowed-failures": retries}
    saved = {k: os.environ.get(k) for k in _MALLOC_ENV}
    if tune_malloc:
        env = dict(dask.config.get("distributed.nanny.pre-spawn-environ", None) or {})
        env.update(_MALLOC_ENV)
        config["distributed.nanny.pre-spawn-environ"] = env
        # the nanny lets variables already in os.environ outrank its configuration, and a nanny
        # started earlier in this process leaves dask's own values there
        for k in _MALLOC_ENV:
            os.environ.pop(k, None)
    try:
        with dask.config.set(config):
            return distributed.LocalCluster(**options)
    finally:
        _restore_environ(saved)


def _restore_environ(saved: Mapping[str, str | None]) -> None:
    """Puts back the variables ``saved`` recorded (None: it was unset)."""
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def run(scene: Callable[[dict, pathlib.Path | None], Any],
        params: Mapping[str, Any] | Iterable[Mapping[str, Any]],
        client: Any = None,
        out: str | os.PathLike | None = None, *,
        progress: bool = True,
        retries: int = 3,
        workers: int | None = None) -> list[Any]:
    """Run ``scene`` once per parameter set on a dask.distributed cluster; results in params order.

    Parameters
    ----------
    scene : callable ``scene(params: dict, out: pathlib.Path | None) -> result``
        Builds and runs one simulation from one parameter set and returns its results (numbers,
        numpy arrays, dicts/lists of those; anything picklable), and/or writes files under
        ``out``.  Must be picklable (cloudpickle: module-level functions, ``functools.partial``,
        functions of a script's ``__main__``, lambdas all work).
    params : list of dicts, or dict (a grid)
        One dict per run, or a dict whose list/range/1-D-array values are axes of a grid expanded
        by :func:`grid` (cartesian product, last key fastest; other values held fixed).
    client : None, distributed.Client, distributed cluster object, or str
        ``None``: start a ``distributed.LocalCluster`` on this machine with :func:`local_cluster`
        (worker processes with one thread each, ``workers`` of them, by default
        ``os.cpu_count()`` but no more than there are runs; listening on 127.0.0.1 only, no
        dashboard), run, and close it.
        A ``Client``: use its cluster; it is left open.
        A cluster object (``LocalCluster``, ``SSHCluster``, ...): connect a client, close the client
        afterwards, leave the cluster running.
        A scheduler address such as ``"tcp://host:8786"``: connect a client, close it afterwards.
    out : path or None
        When given, the folder ``out`` is created and run ``k`` gets ``out / f"run-{k:05d}"``
        (created before the scene starts) as its ``out`` argument; otherwise ``out`` is ``None``.
        The path is made absolute here; on a cluster of several machines it must name a shared
        filesystem.
    progress : bool
        Show a progress bar (tqdm, on stderr; works without a terminal too).
    retries : int
        How many times a task is re-run after its scene raised (default 3).  On the cluster
        started here it is also how many worker deaths a task survives: the scheduler's
        ``distributed.scheduler.allowed-failures``; a given cluster keeps its scheduler's own
        setting (dask's default: 3).  A lost worker never loses a result while the scheduler
        reschedules: run() waits for every task.
    workers : int or None
        Number of worker processes of the cluster started when ``client is None``.

    Returns
    -------
    list
        ``results[k]`` is what ``scene(params[k], out_k)`` returned, unchanged (carried back by
        pickle, byte for byte: identical to :func:`run_serial` for a deterministic scene).

    Raises
    ------
    BatchError
        A task ultimately failed (the scene raised ``retries + 1`` times, or workers kept dying
        while running it): the message names the parameter-set index and dict, the original
        exception is chained.  The other tasks are cancelled.

    Every parameter set is its own task with a unique key (identical sets are not merged), so
    ``run`` can be called again and again on one client without tasks of different calls being
    confused.
    """
    try:
        import distributed
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError("simdverlet.batch.run needs dask.distributed "
                          "(pip install distributed, or apt install python3-distributed); "
                          "run_serial() works without it") from exc

    plist = _expand(params)
    if retries < 0:
        raise ValueError(f"retries must be >= 0, got {retries}")
    if workers is not None and client is not None:
        raise ValueError("workers= sets the size of the cluster run() starts itself; it does not apply "
                         "to a given client, cluster or scheduler address")
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if not plist:
        return []
    root = _resolve_out(out)

    cluster = None
    own_client = False
    if client is None:
        n = workers if workers is not None else max(1, min(os.cpu_count() or 1, len(plist)))
        cluster = local_cluster(n, retries=retries)
        try:
            client = distributed.Client(cluster)
        except BaseException:
            cluster.close()
            raise
        own_client = True
    elif isinstance(client, str):
        client = distributed.Client(client)
        own_client = True
    elif not isinstance(client, distributed.Client):
        if hasattr(client, "scheduler_address"):  # a cluster object
            client = distributed.Client(client)
            own_client = True
        else:
            raise TypeError("client must be None, a distributed.Client, a cluster or a scheduler "
                            f"address string, not {type(client).__name__}")
    if getattr(client, "asynchronous", False):
        raise TypeError("simdverlet.batch.run needs a synchronous distributed.Client")

    try:
        return _collect(client, scene, plist, root, progress, retries)
    finally:
        if own_client:
            client.close()
        if cluster is not None:
            cluster.close()


def _collect(client, scene, plist, root, progress, retries):
    import distributed

    token = uuid.uuid4().hex
    prefix = _key_prefix(scene)
    futures = {}
    for k, p in enumerate(plist):
        fut = client.submit(_run_one, scene, p, _run_dir(root, k), key=f"{prefix}-{k:05d}-{token}",
                            pure=False, retries=retries)
        futures[fut] = k

    results: list[Any] = [None] * len(plist)
    done = [False] * len(plist)
    bar = _Progress(len(plist), progress)
    pending = dict(futures)
    try:
        for fut in distributed.as_completed(list(futures)):
            k = pending.pop(fut)
            try:
                # result() waits if the data was lost with a worker after completion and the
                # scheduler is recomputing it; it raises the scene's exception with its traceback.
                results[k] = fut.result()
            except Exception as exc:
                p = plist[k]
                if isinstance(exc, distributed.KilledWorker):
                    why = (f"workers kept dying while running it ({exc}); the scene may crash its "
                           "process (segfault, out of memory)")
                elif fut.status == "cancelled" or type(exc).__name__ == "CancelledError":
                    why = "the task was cancelled (scheduler or client gone?)"
                else:
                    why = (f"scene {_name(scene)} raised {type(exc).__name__}: {exc} "
                           f"(after {retries} retr{'y' if retries == 1 else 'ies'})")
                raise BatchError(f"simdverlet.batch.run: {_describe(k, p)} failed: {why}", k, p) from exc
            done[k] = True
            fut.release()
            bar.update()
    finally:
        bar.close()
        if pending:  # a failure or an interrupt: the rest of the batch is not wanted
            try:
                client.cancel(list(pending))
            except Exception:  # the client or scheduler is gone already
                pass
    missing = [k for k, d in enumerate(done) if not d]
    if missing:  # pragma: no cover - as_completed yields every future
        k = missing[0]
        raise BatchError(f"simdverlet.batch.run: no result for {_describe(k, plist[k])}", k, plist[k])
    return results
