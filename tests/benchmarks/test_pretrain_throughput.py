"""The throughput benchmark's two sides see the same thing (issue 31, point 2): the same model and
initial weights, the same batches in the same order, the same tokens counted per step; and only
the steps after warm-up and after every compilation are timed."""

import types

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from benchmarks.speed import _mlm_sides as PT  # noqa: E402
from biotok_train.config import PrepareConfig  # noqa: E402
from biotok_train.pretrain.prepare import prepare  # noqa: E402


@pytest.fixture(scope="module")
def data(sample_lines, tiny_wordpiece, tmp_path_factory):
    d = tmp_path_factory.mktemp("tpdata")
    (d / "c.txt").write_text("\n".join(sample_lines[:60]) + "\n", encoding="utf-8")
    return prepare([str(d / "c.txt")], tiny_wordpiece, PrepareConfig(seq_len=32), d / "data", progress=False).path


def _args(**kw):
    return types.SimpleNamespace(**{**dict(size="tiny", steps=6, skip=2, batch_size=4, compile=False, workers=2,
                                           device="cpu"), **kw})


def test_both_sides_train_the_same_model_on_the_same_tokens(data, tmp_path, monkeypatch):
    torch.set_num_threads(1)
    seen = {}
    real = PT.hf_trainer

    def spy(data_, args, work, compile_=False, batches=None):
        seen["batches"] = batches
        return real(data_, args, work, compile_, batches)

    monkeypatch.setattr(PT, "hf_trainer", spy)
    r = PT.measure(data, _args(), tmp_path)
    # the Trainer got our loop's step batches, in order, and counted the same real tokens each step
    assert r["same_tokens"] and len(r["tokens_per_step"]) == 6
    assert r["tokens_per_step"] == [int(b["attention_mask"].sum()) for b in seen["batches"]]
    # the same model from the same weights: the first step's losses agree (dropout masks differ, bf16 where on)
    assert r["hf_losses"][0] == pytest.approx(r["biotok_losses"][0], rel=1e-2)
    assert r["hf_trainer_mode"] == "eager" and set(r["hf_modes"]) == {"eager"}
    for side in ("biotok_step_s", "hf_step_s"):
        s = r[side]
        assert 0 < s["min"] <= s["median"] <= s["max"]
    assert r["ratio"] == pytest.approx(r["biotok_tokens_per_s"] / r["hf_trainer_tokens_per_s"])


def test_the_step_batches_are_the_loops_and_the_trainer_rows_keep_their_order(data, tmp_path):
    from biotok_train.config import OptimConfig, PretrainConfig
    from biotok_train.pretrain import distributed as D
    from biotok_train.pretrain import loop

    args = _args(steps=3)
    batches = PT.step_batches(data, args)
    cfg = PretrainConfig(size="tiny", steps=3, batch_size=4, seed=0, optim=OptimConfig(lr=1e-4), device="cpu")
    run = loop._setup(data, cfg, tmp_path / "run", False)
    try:
        for step, b in enumerate(batches):
            mine, _ = loop._make_micro_batch(run, (step, 0))
            assert all(torch.equal(mine[k], b[k]) for k in PT.KEYS)
    finally:
        run.feed.close()
        D.teardown(run.dist)
    rows = PT._Rows(batches)
    assert len(rows) == 12 and torch.equal(rows[5]["input_ids"], batches[1]["input_ids"][1])


def test_timing_skips_warm_up_and_every_step_that_compiled():
    times, tokens = [9.0, 1.0, 5.0, 1.0, 1.0, 1.0], [10] * 6
    s = PT.summary(times, tokens, graphs=[1, 1, 2, 2, 2, 2], skip=1)  # step 3 compiled a new graph
    assert s["first_timed_step"] == 4 and s["timed_steps"] == 3 and s["tokens_per_s"] == pytest.approx(10.0)
    assert s["last_compiling_step"] == 3
    with pytest.raises(RuntimeError, match="no step left to time"):
        PT.summary(times, tokens, graphs=[1, 2, 3, 4, 5, 6], skip=1)
