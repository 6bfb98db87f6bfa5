"""Heavy work in a child process under kernel limits (issue 33.2, issue 32.7): the result or the
exception comes back to the caller; CPU, memory and wall-clock limits stop the child and say which."""

from __future__ import annotations

import os
import pickle
import threading
import time

import pytest

from redolab.core.isolate import ChildCrashed, ChildLimitReached, ChildLimits, run_limited
from redolab.redo.parsers import RedoInputError

ROOMY = ChildLimits(cpu_seconds=30, memory_bytes=1024 * 1024 * 1024, wall_seconds=60)


# The children's work: module-level functions (they are pickled by reference).
def add(a: int, b: int, *, times: int = 1) -> int:
    return (a + b) * times


def refuse(name: str) -> None:
    raise RedoInputError(f"{name}: line 3: expected a date in FIRST_TIME")


def spin() -> None:
    while True:
        pass


def hoard() -> list[bytes]:
    kept = []
    while True:
        kept.append(bytearray(64 * 1024 * 1024))


def sleep(seconds: float) -> None:
    time.sleep(seconds)


def vanish() -> None:
    os._exit(3)


def unpicklable() -> object:
    return threading.Lock()


def limits_seen() -> tuple[tuple[int, int], tuple[int, int]]:
    import resource

    return resource.getrlimit(resource.RLIMIT_CPU), resource.getrlimit(resource.RLIMIT_AS)


def own_pid() -> int:
    return os.getpid()


def test_the_result_comes_back_from_another_process():
    assert run_limited(add, 2, 3, times=4, limits=ROOMY) == 20
    assert run_limited(own_pid, limits=ROOMY) != os.getpid()


def test_the_limits_are_set_in_the_child_only():
    cpu, memory = run_limited(limits_seen, limits=ROOMY)
    assert cpu[0] == 30 and cpu[1] == 32  # SIGXCPU at 30 s, SIGKILL 2 s later
    assert memory == (ROOMY.memory_bytes, ROOMY.memory_bytes)
    import resource

    assert resource.getrlimit(resource.RLIMIT_CPU)[0] != 30  # the caller is untouched


def test_what_the_work_raises_is_raised_again_in_the_caller():
    with pytest.raises(RedoInputError) as refused:
        run_limited(refuse, "awr.csv", limits=ROOMY)
    assert str(refused.value) == "awr.csv: line 3: expected a date in FIRST_TIME"


def test_the_cpu_limit_stops_a_busy_child():
    started = time.monotonic()
    with pytest.raises(ChildLimitReached) as stopped:
        run_limited(spin, limits=ChildLimits(cpu_seconds=1, memory_bytes=0, wall_seconds=120))
    assert stopped.value.limit == "cpu" and stopped.value.limits.cpu_seconds == 1
    assert time.monotonic() - started < 100  # stopped by the kernel, long before the wall-clock bound


def test_the_memory_limit_stops_a_hoarding_child():
    with pytest.raises(ChildLimitReached) as stopped:
        run_limited(hoard, limits=ChildLimits(cpu_seconds=60, memory_bytes=512 * 1024 * 1024, wall_seconds=120))
    assert stopped.value.limit == "memory"


def test_the_wall_clock_limit_stops_a_waiting_child():
    with pytest.raises(ChildLimitReached) as stopped:
        run_limited(sleep, 60, limits=ChildLimits(cpu_seconds=60, memory_bytes=0, wall_seconds=1))
    assert stopped.value.limit == "time"


def test_a_child_that_ends_without_an_answer_is_a_crash_not_a_hang():
    with pytest.raises(ChildCrashed, match="exit code 3"):
        run_limited(vanish, limits=ROOMY)
    with pytest.raises(ChildCrashed, match="TypeError"):
        run_limited(unpicklable, limits=ROOMY)


def test_a_limit_reached_pickles_and_names_its_limit():
    stopped = pickle.loads(pickle.dumps(ChildLimitReached("cpu", ROOMY)))  # noqa: S301  (our own bytes)
    assert stopped.limit == "cpu" and stopped.limits == ROOMY


def spin_briefly() -> None:
    with pytest.raises(ChildLimitReached):
        run_limited(spin, limits=ChildLimits(cpu_seconds=2, memory_bytes=0, wall_seconds=60))


def test_the_caller_waits_without_holding_the_gil():
    """While a child spins, a thread of the caller gets its work done at once."""
    child = threading.Thread(target=spin_briefly)
    child.start()
    time.sleep(0.5)
    started = time.perf_counter()
    total = sum(range(200_000))
    elapsed = time.perf_counter() - started
    child.join(timeout=120)
    assert total == 199_999 * 100_000 and elapsed < 5


def test_a_script_s_imports_load_once_in_the_forkserver_not_in_every_child(tmp_path):
    """Started as a file (the `redolab` console script under `redolab serve`), the main script runs
    again in every child before the work; its imports come from the forkserver, loaded there once. Before,
    each preview child imported redolab.cli again: 0.33 s of CPU per preview."""
    import subprocess
    import sys
    from pathlib import Path

    imported = tmp_path / "imported.txt"
    (tmp_path / "costly_module.py").write_text(
        f"import os\nwith open({str(imported)!r}, 'a') as out:\n    out.write(str(os.getpid()) + '\\n')\n"
    )
    (tmp_path / "script.py").write_text(
        "import os\nimport costly_module\n"
        "if __name__ == '__main__':\n"
        "    from redolab.core.isolate import ChildLimits, run_limited\n"
        "    limits = ChildLimits(cpu_seconds=30, memory_bytes=0, wall_seconds=60)\n"
        "    children = {run_limited(os.getpid, limits=limits) for _ in range(3)}\n"
        "    print(len(children), os.getpid())\n"
    )
    backend = Path(__file__).resolve().parents[2] / "backend"
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(backend)])}
    done = subprocess.run(
        [sys.executable, str(tmp_path / "script.py")], env=environment, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    children, parent = (int(word) for word in done.stdout.split())
    loaders = imported.read_text().split()
    assert children == 3
    assert len(loaders) == 2 and str(parent) in loaders, loaders  # the script itself, then the forkserver
