"""biotok_train/ablate/slots.py: units that merge whole, a slot planned to fit its time, what it
leaves, and the archive rewritten as jobs settle (the whole way, a seed's slot killed, run again and
merged home: tests/benchmarks/test_ablation_gpu_fr.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from biotok_train.ablate import slots as S
from biotok_train.ablate.engines import run_processes
from biotok_train.ablate.jobs import Job
from biotok_train.ablate.keys import content_keys
from biotok_train.ablate.config import Curve, EngineConfig, Finetuning, Pretraining

from . import toyjobs as T


def _grid(seeds=(0, 1)) -> list[Job]:
    """A from-scratch grid as ``ablate`` plans it: a preparation per vocabulary; per seed and arm a
    pretraining (a whole GPU), its evaluation and fine-tunes; per seed a random-init floor model and
    its fine-tunes."""
    jobs = [Job(f"prepare/{v}", T.add, (v,)) for v in "ab"]
    for p in seeds:
        for v in "ab":
            jobs += [Job(f"pretrain/s/{v}/p{p}", T.add, ("pt",), (f"prepare/{v}",), gpus=1.0),
                     Job(f"evaluate/s/{v}/p{p}", T.add, ("ev",), (f"pretrain/s/{v}/p{p}",)),
                     *(Job(f"finetune/s/{v}/p{p}/t/f{f}", T.add, ("ft",), (f"pretrain/s/{v}/p{p}",), gpus=1.0,
                           shares_gpu=True) for f in (0, 1)),
                     Job(f"floor-model/s/{v}/p{p}", T.add, ("fm",), (f"prepare/{v}",)),
                     *(Job(f"finetune/s/{v}/floor/p{p}/t/f{f}", T.add, ("ff",), (f"floor-model/s/{v}/p{p}",),
                           gpus=1.0, shares_gpu=True) for f in (0, 1))]
    return jobs


def test_a_pretraining_with_all_that_needs_it_is_one_unit_other_jobs_stand_alone():
    us = {u.name: u for u in S.units(_grid((0,)))}
    assert us["pretrain/s/a/p0"].jobs == ("pretrain/s/a/p0", "evaluate/s/a/p0", "finetune/s/a/p0/t/f0",
                                          "finetune/s/a/p0/t/f1")
    assert us["pretrain/s/a/p0"].model and not us["prepare/a"].model
    assert us["finetune/s/a/floor/p0/t/f1"].jobs == ("finetune/s/a/floor/p0/t/f1",)  # a floor merges alone
    assert len(us) == 2 + 2 * (1 + 1 + 2)
    two = [Job("m1", T.add, ("m1",), gpus=1.0), Job("m2", T.add, ("m2",), gpus=1.0),
           Job("both", T.add, ("both",), ("m1", "m2")), Job("after", T.add, ("after",), ("both",))]
    assert [u.jobs for u in S.units(two)] == [("m1", "m2", "both", "after")]  # a dependent in common: one unit


def test_simulate_follows_the_engines_shares_and_workers():
    jobs = [Job("p", T.add, ("p",)), Job("m", T.add, ("m",), ("p",), gpus=1.0),
            Job("f1", T.add, ("f1",), ("m",), gpus=1.0, shares_gpu=True),
            Job("f2", T.add, ("f2",), ("m",), gpus=1.0, shares_gpu=True)]
    secs = {"p": 10, "m": 100, "f1": 20, "f2": 20}
    assert S.simulate(jobs, secs, {"m": 1.0, "f1": 0.5, "f2": 0.5}, 1.0, 4) == 130  # f1, f2 side by side
    assert S.simulate(jobs, secs, {"m": 1.0, "f1": 1.0, "f2": 1.0}, 1.0, 4) == 150  # one at a time
    assert S.simulate(jobs, secs, {}, 1.0, 1) == 150  # one worker
    with pytest.raises(ValueError, match="can never start"):
        S.simulate(jobs, secs, {"m": 2.0}, 1.0, 4)


def test_a_slot_takes_the_lowest_seed_models_first_and_leaves_what_does_not_fit():
    jobs = _grid()
    keys = content_keys(jobs)
    secs = {j.key: 60 if "/floor/" in j.key and j.key.startswith("finetune") else
            {"prepare": 10, "pretrain": 100}.get(j.key.split("/")[0], 20) for j in jobs}
    asks = {j.key: 0.25 if j.gpus else 0.0 for j in jobs}
    whole = S.plan_slot(jobs, keys, {}, secs, asks, 1.0, 8, 10_000, 5)
    assert whole.seeds == (0,) and not whole.left  # one seed a slot, all of it
    assert len(whole.units) == 2 + 2 + 2 + 4 and whole.jobs == 2 + 2 * 7
    # start-up, preparations; 2 pretrainings (1/2 of the GPU) beside the floors' models then 2 of their fine-tunes
    # (30-90 s), the 2 others at 90-150; the arms' fine-tunes wait for a share at 110 and 130
    assert whole.seconds == 5 + 150
    tight = S.plan_slot(jobs, keys, {}, secs, asks, 1.0, 8, 140, 5)
    assert tight.seconds == 5 + 130 and {u.name for u in tight.left} == {"finetune/s/a/floor/p0/t/f1",
                                                                         "finetune/s/b/floor/p0/t/f1"}
    # the models first, the floors breadth-first: fine-tuning seed 0 of every arm before seed 1
    assert [u.name for u in tight.units if "/floor/" in u.name] == ["finetune/s/a/floor/p0/t/f0",
                                                                     "finetune/s/b/floor/p0/t/f0"]
    home = {k: keys[k] for u in whole.units for k in u.jobs}  # seed 0 merged home
    nxt = S.plan_slot(jobs, keys, home, secs, asks, 1.0, 8, 10_000, 5)
    assert nxt.seeds == (1,) and all("/p1" in k for k in nxt.run)
    half = dict(home)
    del half["finetune/s/b/p0/t/f1"]  # b's unit incomplete at home: its pretraining runs again with all of it
    redo = S.plan_slot(jobs, keys, half, secs, asks, 1.0, 8, 10_000, 5)
    assert redo.seeds == (0,) and set(redo.run) == {"pretrain/s/b/p0", "evaluate/s/b/p0", "finetune/s/b/p0/t/f0",
                                                    "finetune/s/b/p0/t/f1"}


def test_merge_keeps_whole_units_and_names_the_cut_ones():
    jobs = _grid((0,))
    keys = content_keys(jobs)
    came = {k: keys[k] for k in keys if k != "finetune/s/b/p0/t/f1"}
    came["evaluate/s/a/p0"] = "another content key"  # a record of other inputs is never merged
    keep, part = S.merge_filter(jobs, keys, came)
    assert keep("prepare/a") and keep("finetune/s/b/floor/p0/t/f1") and not keep("pretrain/s/b/p0")
    assert not keep("pretrain/s/a/p0") and {u.name for u in part} == {"pretrain/s/a/p0", "pretrain/s/b/p0"}
    assert S.complete_seeds(jobs, keys, came, (0,)) == () and S.complete_seeds(jobs, keys, keys, (0,)) == (0,)
    table = S.status_lines(jobs, keys, {k: v for k, v in came.items() if keep(k)}, (0,))
    assert "| 0 | pretrain/s/b/p0 with what needs it | 4 | no |" in table
    assert "| 0 | finetune/s/a/floor/... | 2 | yes |" in table


def test_the_archive_is_rewritten_as_each_job_settles(tmp_path):
    """on_done (the hook a slot rewrites its archive from) hears each job once, so a slot killed at
    its limit has written every finished job: here each rewrite is kept and counted."""
    jobs = [Job("a", T.add, ("a",)), Job("b", T.add, ("b",), ("a",)), Job("c", T.add, ("c",), ("a",))]
    seen: list[int] = []

    def write(_outcome):
        seen.append(len(list((tmp_path / "jobs").glob("*.json"))) // 2)  # records and their costs

    run_processes(jobs, content_keys(jobs), T.ToyEnv(str(tmp_path)), EngineConfig("processes", workers=2),
                  on_done=write)
    assert seen[0] >= 1 and seen[-1] == 3 and len(seen) == 3


def test_device_name_and_seed_of():
    assert S.seed_of("finetune/small/a/floor/p12/e3c/f0") == 12 and S.seed_of("pretrain/small/a/p3") == 3
    assert S.seed_of("prepare/a") is None and isinstance(S.device_name(), str)


def test_the_units_of_an_ablation_grid():
    """On the grid ``ablate`` plans (2 vocabularies from scratch, 2 tasks, 2 x 2 seeds, a curve): each
    pretraining with its evaluations (final and the curve's) and fine-tunes (final and the curve's)."""
    from biotok_train.ablate.plan import leg_names, make_plan, plan_legs
    from biotok_train.ablate.config import AblationConfig

    cfg = AblationConfig(tokenizers=("t/a", "t/b"), corpus=("c",), tasks=("e3c", "morfitt"),
                         pretraining=Pretraining(seeds=(0, 1), budget=100), finetuning=Finetuning(seeds=(0, 1)),
                         curve=Curve(steps=(50,)))
    legs = plan_legs(cfg, dict(zip(cfg.tokenizers, leg_names(cfg.tokenizers))))
    fp = {"corpus": "C", "base": None, "tok": {leg.vocab: "T" for leg in legs}, "task": {t: "K" for t in cfg.tasks},
          "precision": "cpu:fp32"}
    us = {u.name: u for u in S.units(make_plan(cfg, legs, fp).jobs)}
    a0 = us["pretrain/tiny/a/p0"]
    assert a0.model and set(a0.jobs) == {"pretrain/tiny/a/p0", "evaluate/tiny/a/p0", "evaluate/tiny/a/p0/k50",
                                         *(f"finetune/tiny/a/p0/{t}/f{f}" for t in cfg.tasks for f in (0, 1)),
                                         *(f"curve/tiny/a/k50/p0/e3c/f{f}" for f in (0, 1))}
    assert sum(u.model for u in us.values()) == 4 and not us["floor-model/tiny/a/p0"].model
    assert us["finetune/tiny/a/floor/p1/morfitt/f1"].jobs == ("finetune/tiny/a/floor/p1/morfitt/f1",)


@pytest.mark.parametrize("share,overlap", [(0.5, True), (0.0, False)])
def test_pretrainings_run_side_by_side_at_their_share(tmp_path, share, overlap):
    """EngineConfig.pretrain_gpus: two jobs asking a whole GPU of their own (pretrainings) share the
    one GPU at 0.5 each; at 0 (the default) each takes all of it, one at a time (markers, not timings)."""
    wait = 120.0 if overlap else 5.0
    jobs = [Job("x", T.rendezvous, ("x", "y", wait), gpus=1.0), Job("y", T.rendezvous, ("y", "x", wait), gpus=1.0)]
    engine = EngineConfig(engine="processes", workers=2, gpus_per_job=0.25, pretrain_gpus=share)
    out = run_processes(jobs, content_keys(jobs), T.ToyEnv(str(tmp_path)), engine, gpus=1)
    assert [out[k].result["saw_other_running"] for k in "xy"] == [overlap, overlap]
