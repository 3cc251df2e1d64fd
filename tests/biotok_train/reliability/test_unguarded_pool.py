"""Issue 46, item 3: a pool biotok starts never runs the user's script again. A script without
``if __name__ == "__main__":`` runs the ablation's processes engine (or Ray) at its top level: each
worker imports only biotok's job functions, so the script's top level runs once and every job is done."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("engine", ["processes", "ray"])
def test_a_pool_engine_in_a_script_without_the_main_guard(tmp_path, engine):
    if engine == "ray" and importlib.util.find_spec("ray") is None:
        pytest.skip("Ray is not installed (biotok[ray])")
    script = tmp_path / "user_script.py"
    out = tmp_path / "out"
    script.write_text(textwrap.dedent(f"""
        from pathlib import Path
        from biotok_train.ablate.engines import run_processes, run_ray
        from biotok_train.ablate.keys import content_keys
        from biotok_train.ablate.config import EngineConfig
        from tests.biotok_train.ablate import toyjobs as T

        with open({str(tmp_path / "top-level.log")!r}, "a") as f:  # each run of this top level
            f.write("ran\\n")
        Path({str(out)!r}).mkdir(exist_ok=True)
        jobs = T.plan()
        run = run_ray if {engine!r} == "ray" else run_processes
        res = run(jobs, content_keys(jobs), T.ToyEnv({str(out)!r}), EngineConfig(engine={engine!r}, workers=2))
        print(sorted((k, o.status) for k, o in res.items()))
        """), encoding="utf-8")
    env = {"PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
           "RAY_USAGE_STATS_ENABLED": "0"}
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert (tmp_path / "top-level.log").read_text() == "ran\n"  # the workers never ran it again
    assert proc.stdout.strip() == str([(k, "done") for k in "abcde"])
