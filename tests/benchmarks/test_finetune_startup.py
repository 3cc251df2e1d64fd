"""benchmarks.speed.finetune_startup: each phase of an ablation fine-tune is timed, for two seeds in
one process, on a tiny model (--quick)."""

import pytest

pytest.importorskip("torch")

from benchmarks.speed import finetune_startup as F  # noqa: E402


def test_phases_of_two_fine_tunes_in_one_process(shared_data, tmp_path, monkeypatch):
    monkeypatch.setattr(F, "CACHE", tmp_path)
    model = F.small_model(tmp_path, "tiny", F.C.CAMEMBERTA)
    row = F.fine_tune_phases(model, "e3c", [0, 1], quick=True, work=tmp_path)
    assert [r["seed"] for r in row["seeds"]] == [0, 1]
    for r in row["seeds"]:
        sec = r["seconds"]
        assert r["steps"] == 2 and r["features"]["train"] >= 8 and r["recipe_steps"] >= 3
        for phase in ("load model+tokenizer", "train forward", "backward", "optimizer step",
                      "evaluate (dev, test)", "eval forward", "decode", "score", "write results"):
            assert sec[phase] > 0, phase
        assert sec["fit total"] >= sec["train epochs"] + sec["evaluate (dev, test)"]
        assert (tmp_path / f"ft-e3c-{r['seed']}" / "results.json").is_file()
    first, second = (r["seconds"]["encode"] for r in row["seeds"])
    assert first > 0 and second <= first  # the second seed reuses the encoded splits (engine._Encoded)
    s = F.summarize(row)
    assert set(s) == {"seed 0", "seed 1"} and s["seed 1"]["recipe_steps"] == row["seeds"][1]["recipe_steps"]
    # the engine is left as it was: its functions restored after timing
    from biotok_train.finetune import engine

    assert engine._setup.__module__ == "biotok_train.finetune.engine" and engine._forward.__name__ == "_forward"
