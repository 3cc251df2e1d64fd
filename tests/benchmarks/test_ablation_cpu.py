"""benchmarks/experiments/ablation_cpu.py over biotok_train.ablate.experiment: the toy-size slot workflow on a second
recipe (the first: test_ablation_gpu_fr.py). Its CPU side, --pack, one pretraining seed's slot on a machine holding only
what pack.sh and --pack carry, --merge: the seed's records come home whole and its page is written from them."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import benchmarks._common as common
from benchmarks import corpora as C
from benchmarks.experiments import ablation_cpu as A
from tests.benchmarks.test_ablation_gpu_fr import _next_command, _pack_sh


def _device(gpu, device, command, out) -> int:
    """The device command as the GPU machine runs it, in a process whose only data is ``gpu``'s (no GPU: no share)."""
    args = shlex.split(command.split("ablation_cpu ", 1)[1].replace("$OUT", str(out)))
    i = args.index("--gpus-per-job")
    args = args[:i] + args[i + 2:] + ["--workers", "2"]
    args[args.index("--slot") + 1] = "100000"
    code = ("import sys; from pathlib import Path; import benchmarks._common as C; "
            "from benchmarks.experiments import ablation_cpu as A; "
            f"A.GPU_PACK = Path({str(gpu)!r}); C.CACHE = Path({str(device)!r}); sys.exit(A.main({args!r}))")
    env = {**os.environ, "BIOTOK_SHARED_DATA": str(gpu / "data"), "PYTHONPATH": str(C.REPO), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-c", code], cwd=C.REPO, env=env, timeout=1800).returncode


def test_a_seed_in_a_slot_then_merged_on_a_second_recipe(shared_data, tmp_path, monkeypatch, capsys):
    from biotok_train.ablate import slots as S
    from biotok_train.ablate import store

    monkeypatch.setattr(common, "CACHE", tmp_path)
    gpu = tmp_path / ".gpu"
    monkeypatch.setattr(A, "GPU_PACK", gpu)
    exp = A.experiment()
    work = exp.work(True)
    exp.cpu_side(work, work / "page", "cmd", X_args(dry_run=True))  # the split and the vocabulary only
    _pack_sh(shared_data, gpu)
    assert A.main(["--quick", "--pack"]) == 0
    out = capsys.readouterr().out
    assert "Next slot: pretraining seed 0, " in out and (gpu / work.name / "pack.json").is_file()
    packed = json.loads((gpu / work.name / "pack.json").read_text())
    assert set(packed) == {f"Unigram_L-8k/{f.name}" for f in (work / "Unigram_L-8k").iterdir()}  # shared data not packed
    slot = tmp_path / "out"
    slot.mkdir()
    assert _device(gpu, tmp_path / "device", _next_command(out), slot) == 0
    came = store.read_archive(slot / "slot.tar.xz").contents()
    assert A.main(["--quick", "--merge", str(slot / "slot.tar.xz")]) == 0
    cfg = exp.config(work, ("e3c",))
    jobs, keys = S.plan_jobs(cfg)
    home = store.home_records(work / "run")
    seed0 = {k for k in keys if S.seed_of(k) in (None, 0)}
    assert set(came) == seed0 and all(home[k] == keys[k] for k in seed0)  # the seed came home whole, same keys
    assert json.loads((work / "downstream.json").read_text())["pretrain_seeds"] == [0]
    readme = (work / "page" / "README.md").read_text(encoding="utf-8")
    assert "--merge slot-*.tar.xz" in readme and (work / "page" / "ablation.json").is_file()


def X_args(**kw):
    import argparse

    return argparse.Namespace(**kw)
