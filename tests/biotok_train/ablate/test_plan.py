"""ablate.plan: the plan of an ablation as jobs. The keys and content keys of the jobs an ablation
already had are pinned (a finished run's cache stays valid when the plan grows); the curve adds a
held-out evaluation per arm, pretraining seed and step, and --curve-tasks none no fine-tuning."""

from __future__ import annotations

import hashlib
import json

from biotok_train.ablate.keys import content_keys
from biotok_train.ablate.plan import leg_names, make_plan, plan_legs
from biotok_train.ablate.config import AblationConfig

# Table 9 with a curve (general, continual, transfer fvt and random, scratch; 2 pretraining seeds)
TABLE9 = dict(tokenizers=("a/x",), corpus=("c",), tasks=("e3c",), seeds=(0, 1), base="m/base", curve=(50, 100),
              arms=("general", "continual", "transfer", "scratch"), transfer_methods=("fvt", "random"),
              pretrain_seeds=(0, 1))
# sha256 of the sorted (key, content key) pairs of its 92 jobs before the held-out curve (main at 08c8405)
TABLE9_JOBS = "0f6d41e14bdbb26fc392acf884b51d4f11426348e286bdf55e9befd3f4fd64c2"


def _plan(**kw):
    cfg = AblationConfig.from_flat(**kw)
    legs = plan_legs(cfg, dict(zip(cfg.tokenizers, leg_names(cfg.tokenizers))))
    fp = {"corpus": "C", "base": "B" if cfg.base.model else None, "tok": {leg.vocab: "T" + leg.vocab for leg in legs},
          "task": {t: "K" + t for t in cfg.tasks}, "precision": "cpu:fp32"}
    g = make_plan(cfg, legs, fp)
    return g, content_keys(g.jobs)


def test_the_jobs_an_ablation_had_keep_their_keys_and_the_curve_adds_evaluations():
    g, keys = _plan(**TABLE9)
    added = {k for k in keys if k.startswith("evaluate/") and "/k" in k}
    old = sorted((k, v) for k, v in keys.items() if k not in added)
    assert len(old) == 92 and hashlib.sha256(json.dumps(old).encode()).hexdigest() == TABLE9_JOBS
    pretrained = ("continual.base", "transfer-fvt.x", "transfer-random.x", "scratch.x")  # general is the base as is
    assert added == {f"evaluate/as-base/{a}/p{p}/k{k}" for a in pretrained for p in (0, 1) for k in (0, 50, 100)}
    by_key = {j.key: j for j in g.jobs}
    # k = 0: the model the arm starts from (the base, the transferred base, the random init), its text prepared
    assert by_key["evaluate/as-base/continual.base/p0/k0"].args == ("base", "m/base")
    assert by_key["evaluate/as-base/transfer-random.x/p1/k0"].needs == ("prepare/x", "transfer/random/x")
    assert by_key["evaluate/as-base/scratch.x/p1/k0"].args == ("x", "init/random.x/p1")
    assert by_key["evaluate/as-base/scratch.x/p1/k50"].args == ("x", "arms/as-base/scratch.x/p1/curve/step-50")
    assert by_key["evaluate/as-base/scratch.x/p1/k50"].needs == ("pretrain/as-base/scratch.x/p1",)
    assert len({keys[k] for k in added}) == len(added)  # each its own content


def test_curve_tasks_none_plans_no_curve_fine_tuning():
    kw = dict(tokenizers=("a/x", "b/y"), corpus=("c",), tasks=("e3c", "q"), seeds=(0,), curve=(5, 10), budget=20,
              floor=False)
    _, first = _plan(**kw)
    _, none = _plan(**kw, curve_tasks=())
    _, both = _plan(**kw, curve_tasks=("q", "e3c"))
    assert {k for k in first if k.startswith("curve/")} == {
        f"curve/tiny/{a}/k{k}/p0/e3c/f0" for a in "xy" for k in (5, 10)}  # the default: the first task
    assert any(k.startswith("finetune/tiny/x/floor/") for k in first)  # scratch's k = 0 is its floor
    assert not any(k.startswith(("curve/", "floor-model/")) or "/floor/" in k for k in none)
    assert {k for k in none if "/k" in k} == {f"evaluate/tiny/{a}/p0/k{k}" for a in "xy" for k in (5, 10)}
    assert set(none) < set(first) and all(none[k] == first[k] for k in none)  # the same jobs, fewer of them
    assert {k.split("/")[5] for k in both if k.startswith("curve/")} == {"e3c", "q"}
    assert all(both[k] == first[k] for k in first)
    assert AblationConfig.from_flat(**kw, curve_tasks=("e3c",)).curve.tasks is None  # the first task is the default
