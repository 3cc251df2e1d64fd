"""ablate.command: the pretrainings' compile choice is an engine option (as ``biotok-train mlm``'s), never part of the
recipe, of a content key, or of the report's command line."""

from __future__ import annotations

import json

import pytest

from biotok_train.ablate import jobs as J
from biotok_train.ablate.command import command_line, engine_config
from biotok_train.ablate.config import AblationConfig, EngineConfig, Pretraining

BASE = {"engine": "local", "workers": 0, "gpus_per_job": 0.0, "address": None, "only": ()}


@pytest.mark.parametrize("flag, mode, want", [(None, "auto", ("auto", "auto")), (True, "reduce-overhead", ("on", "reduce-overhead")),
                                              (False, "default", ("off", "default"))])
def test_compile_options_become_the_engines(flag, mode, want):
    options = {**BASE, "compile": flag, "compile_mode": mode, "budget": 4}
    engine = engine_config(options)
    assert (engine.compile, engine.compile_mode) == want and options == {"budget": 4}  # taken out of the options


def test_an_unknown_compile_mode_is_refused():
    with pytest.raises(Exception, match="unknown --compile-mode 'fast'"):
        EngineConfig(compile_mode="fast")


def test_the_compile_choice_reaches_every_pretraining_and_nothing_else(tmp_path, monkeypatch):
    cfg = AblationConfig(tokenizers=("x",), corpus=("c.txt",), pretraining=Pretraining(budget=3))
    seen = []

    class Res:
        steps, final_loss = 3, 1.0

    def chunk(env, vocab, pcfg, model, stop):
        seen.append((pcfg.compile, pcfg.compile_mode))
        model.mkdir(parents=True, exist_ok=True)
        (model / "metrics.jsonl").write_text(json.dumps({"step": 3, "loss": 1.0, "tokens": 9}) + "\n")
        return Res()

    monkeypatch.setattr(J, "_pretrain_chunk", chunk)
    J.pretrain(J.Env(cfg, str(tmp_path), compile=("off", "default")), "tiny", "v", 0, "arms/tiny/v/p0", None, needs={})
    assert seen == [("off", "default")]
    assert "compile" not in cfg.recipe() and "--compile" not in command_line(cfg)
