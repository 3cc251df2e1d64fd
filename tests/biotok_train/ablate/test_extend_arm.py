"""The extend arm (issue 44): the base's vocabulary plus K pieces of the pretraining text, FVT rows,
continued on the same budget as continual and transfer; one ablation answers keep, extend or replace."""

from __future__ import annotations

import json

import pytest

from biotok_train.ablate import run_ablation
from biotok_train.ablate.command import command_line
from biotok_train.ablate.keys import Key
from biotok_train.config import FinetuneConfig
from biotok_train.ablate.config import AblationConfig, Base, Finetuning, Pretraining, Statistics
from biotok_train.errors import ConfigError
from tests.biotok_train.ablate.test_run import _bio_task, base_model  # noqa: F401 (a fixture)


def _cfg(task, corpus, tok, base) -> AblationConfig:
    return AblationConfig(tokenizers=(str(tok),), corpus=(str(corpus),), tasks=(str(task),),
                          arms=("continual", "extend", "transfer"), pretraining=Pretraining(budget=2, batch_size=2, seq_len=32),
                          finetuning=Finetuning(FinetuneConfig(epochs=1, max_steps=2, batch_size=4), seeds=(0,)),
                          base=Base(str(base), extend_add=40), statistics=Statistics(n_words=10, heldout_every=50, n_resamples=100))


def test_extend_arm_keeps_every_base_row_and_answers_keep_extend_replace(tmp_path, sample_corpus, tiny_unigram,
                                                                        base_model, monkeypatch):  # noqa: F811
    from safetensors.torch import load_file

    from biotok.formats import load

    task = _bio_task(tmp_path / "task", n_test=8)
    cfg = _cfg(task, sample_corpus, tiny_unigram, base_model)
    out = tmp_path / "out"
    report = run_ablation(cfg, out, progress=False)
    names = [a.name for a in report.arms]
    assert names == ["continual.general", "extend.general+40", "transfer.unigram-lower"]
    # the extended vocabulary: the base's tokens at their ids, 40 more after them, made from the pretraining split
    base, ext = load(base_model), load(out / "extend" / "general+40")
    base_vocab, ext_vocab = base.backend.get_vocab(), ext.backend.get_vocab()
    assert len(ext_vocab) == len(base_vocab) + 40 and all(ext_vocab[t] == i for t, i in base_vocab.items())
    meta = json.loads((out / "extend" / "general+40" / "biotok.json").read_text("utf-8"))
    assert "selection" in meta and meta["config"]["extend"]["add"] == 40
    record = json.loads((out / "jobs" / "extend" / "general+40.json").read_text("utf-8"))
    assert record["result"]["added"] == 40 and record["result"]["pieces"] < record["result"]["base_pieces"]
    # its model: the base moved to it by FVT, every old row bit-identical, then continued like the others
    moved = load_file(out / "transfer" / "fvt" / "general+40" / "model.safetensors")
    orig = load_file(base_model / "model.safetensors")
    emb = next(k for k in moved if k.endswith("word_embeddings.weight"))
    assert moved[emb].shape[0] >= len(base_vocab) + 40
    assert (moved[emb][: len(base_vocab)] == orig[emb][: len(base_vocab)]).all()
    assert {a.steps for a in report.arms} == {2} and report.arm("as-base", "extend.general+40").vocab_size == \
        len(ext_vocab)
    # compared with continual (what the added pieces buy) and beside replace, against its own floor
    assert ("continual.general", "extend.general+40") in {(c["reference_arm"], c["candidate_arm"])
                                                         for c in report.comparisons}
    assert any(f["arm"] == "extend.general+40" for f in report.floors)
    md = report.markdown
    assert "*extend.B+K* keeps the base's vocabulary B, adds K = 40 pieces" in md
    assert "| the base + 40 pieces, fvt rows | extend.general+40 |" in md
    assert "--arms continual,extend,transfer" in md and "--extend-add 40" in md
    # resumed: nothing is made again, the same page
    import biotok.extension as extension
    import biotok_train.pretrain.loop as loop

    monkeypatch.setattr(loop, "pretrain", lambda *a, **k: (_ for _ in ()).throw(AssertionError("redone")))
    monkeypatch.setattr(extension, "extend", lambda *a, **k: (_ for _ in ()).throw(AssertionError("redone")))
    assert run_ablation(cfg, out, progress=False).markdown == md


def test_extend_arm_plan_keys_and_options(tmp_path, sample_corpus, tiny_unigram):
    from biotok_train.ablate.plan import comparison_pairs, plan_legs
    from biotok_train.ablate.store import Layout

    cfg = AblationConfig(tokenizers=(str(tiny_unigram),), corpus=(str(sample_corpus),), arms=("continual", "extend"),
                         base=Base(model="models/base", extend_add=500))
    legs = plan_legs(cfg, {str(tiny_unigram): "u"})
    assert [(x.name, x.init, x.vocab, x.tokenizer) for x in legs] == [
        ("continual.base", "continual", "base", "models/base"),
        ("extend.base+500", "extend", "base+500", str(Layout().extend("base+500")))]
    assert comparison_pairs(legs) == [("continual.base", "extend.base+500")]
    assert str(Key.parse("extend/base+500")) == "extend/base+500" and Key.parse("extend/base+500").vocab == "base+500"
    assert "--extend-add 500" in command_line(cfg) and "--extend-add" not in command_line(
        AblationConfig(tokenizers=("a",), corpus=("c",), arms=("continual",), base=Base(model="m", extend_add=500)))
    # a recipe without the extend arm is the recipe it was before the option existed
    assert "extend_add" not in AblationConfig(tokenizers=("a",), corpus=("c",)).recipe()
    with pytest.raises(ConfigError, match="--extend-add 0"):
        AblationConfig(tokenizers=("a",), corpus=("c",), arms=("extend",), base=Base(model="m", extend_add=0))
    with pytest.raises(ConfigError, match="--base"):
        AblationConfig(tokenizers=("a",), corpus=("c",), arms=("extend",))


def test_extended_vocabulary_is_keyed_by_its_inputs(monkeypatch):
    from biotok_train.ablate.keys import extended_key

    a = extended_key("fp", "corpus", 100)
    assert a == extended_key("fp", "corpus", 100)
    assert len({a, extended_key("fp2", "corpus", 100), extended_key("fp", "corpus2", 100),
                extended_key("fp", "corpus", 101)}) == 4
    import biotok.extension as extension

    monkeypatch.setattr(extension, "SELECTION_VERSION", extension.SELECTION_VERSION + 1)
    assert extended_key("fp", "corpus", 100) != a  # another selection: another vocabulary, made again
