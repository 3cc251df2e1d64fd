"""ablate.results: ablation.json read back gives the same object, whatever version of the page wrote it."""

import json
from pathlib import Path

import pytest

from biotok_train.ablate.results import KEYS, Recipe, Results, load

RESULTS = Path(__file__).resolve().parents[3] / "docs" / "results"
PAGES = sorted(p.parent.name for p in RESULTS.glob("*/ablation.json"))


@pytest.mark.parametrize("page", PAGES)
def test_published_json_round_trips(page):
    """from_json then to_json: the same keys in the same order and the same values (an older arm's missing
    fields at their defaults)."""
    d = json.loads((RESULTS / page / "ablation.json").read_text(encoding="utf-8"))
    back = Results.from_json(d).to_json()
    assert list(back) == [k for k in KEYS if k in d] == list(d)
    assert {k: v for k, v in back.items() if k != "arms"} == {k: v for k, v in d.items() if k != "arms"}
    defaults = {"heldout_mlm": {}, "probe": {}, "loss_curve": [], "pretrain_loss": None}
    assert [{k: v for k, v in a.items() if k in old or v != defaults[k]} for a, old in zip(back["arms"], d["arms"])] \
        == d["arms"]
    assert load(RESULTS / page).costs == (json.loads((RESULTS / page / "costs.json").read_text(encoding="utf-8"))
                                          if (RESULTS / page / "costs.json").is_file() else {})


def test_recipe_reads_old_and_new_recipes():
    """A recipe saved with one transfer method reads as its list; the probe's steps come from the command."""
    old = json.loads((RESULTS / "table9-cpu" / "ablation.json").read_text(encoding="utf-8"))
    # its recipe as ablate saved it before several transfer methods (table9-cpu's until 2026-12-02): these keys only
    saved = ("corpus", "field_name", "tasks", "data_dir", "sizes", "budget", "batch_size", "seq_len", "lr", "pretrain_seeds",
             "seeds", "finetune", "n_words", "heldout_every", "floor", "n_resamples", "confidence", "arms", "base")
    old["recipe"] = {**{k: old["recipe"][k] for k in saved}, "transfer_method": "fvt"}
    assert not Results.from_json(json.loads((RESULTS / "table9-cpu" / "ablation.json").read_text("utf-8"))).setup.one_method
    setup = Results.from_json(old).setup
    assert setup.one_method and setup.transfer_methods == ["fvt"] and setup.probe == 0 and setup.pairs == "reference"
    new = Results.from_json(json.loads((RESULTS / "ablation-cpu-16000" / "ablation.json").read_text(encoding="utf-8")))
    assert not new.setup.one_method and new.setup.probe == 400 and new.setup.tokens_per_arm == 16000 * 8 * 128
    assert isinstance(new.setup, Recipe) and new.names == ["camemberta-base", "Unigram_L-8k"]
