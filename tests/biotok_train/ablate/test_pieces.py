"""biotok_train/ablate/pieces.py and estimate.pieces: a grid cut for short GPU slots, and what the
records at home complete (the whole way, a piece on a bare machine merged home:
tests/benchmarks/test_ablation_gpu_fr.py)."""

from __future__ import annotations

import pytest

from biotok_train.ablate import estimate as E
from biotok_train.ablate import pieces as P
from biotok_train.config import AblationConfig

CFG = AblationConfig(tokenizers=("a", "b"), corpus=("c.txt",), tasks=("e3c", "morfitt"), sizes=("small",),
                     pretrain_seeds=(0, 1, 2), seeds=(0, 1, 2), budget=6000, batch_size=64)
ROWS = [{"job": "pretrain", "minutes": 4.0}, {"job": "finetune e3c", "minutes": 0.4},
        {"job": "finetune morfitt", "minutes": 0.6}]


def test_a_pretraining_goes_with_its_fine_tunes_and_floors_are_grouped_to_fit():
    plan = E.pieces(CFG, ["a", "b"], ROWS, packed=4, text_chars=60_000_000)  # 1 minute of preparation a piece
    assert [p.name for p in plan] == ["a/p0", "b/p0", "a/floor/p0-2", "b/floor/p0-2", "a/p1", "b/p1", "a/p2", "b/p2"]
    arm = plan[0]
    assert arm.patterns == ("finetune/small/a/p0/*", "evaluate/small/a/p0")
    assert arm.minutes == pytest.approx(1 + 4.0 + (0.4 + 0.6) * 3 / 4)  # prepare, pretrain, 6 fine-tunes 4 at a time
    floor = plan[2]
    assert floor.patterns == tuple(f"finetune/small/a/floor/p{p}/*" for p in (0, 1, 2))
    assert floor.minutes == pytest.approx(1 + 3 * 0.75) and "seeds 0, 1, 2" in floor.what
    slow = [dict(r, minutes=r["minutes"] * 4) for r in ROWS]  # floors of one seed take 3 minutes: two per piece
    names = [p.name for p in E.pieces(CFG, ["a"], slow, packed=4, text_chars=60_000_000)]
    assert names == ["a/p0", "a/floor/p0-1", "a/floor/p2", "a/p1", "a/p2"]
    with pytest.raises(ValueError, match="without a curve"):
        E.pieces(AblationConfig(tokenizers=("a",), corpus=("c",), tasks=("e3c",), curve=(10,), budget=20), ["a"],
                 ROWS, 4, 1)


def test_complete_seeds_and_the_table():
    plan = E.pieces(CFG, ["a", "b"], ROWS, packed=4, text_chars=60_000_000)
    done = {"a/p0", "b/p0", "a/floor/p0-2", "b/floor/p0-2", "a/p2"}
    state = [(p, p.name in done) for p in plan]
    assert P.complete_seeds(CFG, state) == (0,)  # seed 2 waits for b/p2, seed 1 for both
    state = [(p, p.name != "b/floor/p0-2") for p in plan]
    assert P.complete_seeds(CFG, state) == ()  # the floors of every seed are missing for b
    lines = P.table([(p, p.name in done) for p in plan])
    assert lines[2] == "| a/p0 | prepare, pretrain seed 0, evaluate, 2 tasks x 3 seeds | 5.8 | yes |"
    assert lines[-1] == "5 of 8 pieces done, 17 estimated H100-minutes left."
