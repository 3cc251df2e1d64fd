"""bf16 where the hardware has bf16 units (biotok_train.precision, issue 31 point 4): the detection,
and bf16 against fp32 within the GPU suite's bf16 tolerance for the pretraining losses, a
fine-tuning run's losses and F1, and the probe's bits per character. The equivalence tests force
"supported" so they run on any CPU (autocast emulates bf16 where there are no bf16 units)."""

from __future__ import annotations

import shutil

import pytest

torch = pytest.importorskip("torch")

from benchmarks.speed.gpu_suite.config import TOLERANCES  # noqa: E402
from biotok_train import precision  # noqa: E402
from biotok_train.config import FinetuneConfig, OptimConfig, PrepareConfig, PretrainConfig, ProbeConfig  # noqa: E402

BF16 = TOLERANCES["bf16"]


def _rel(a, b) -> float:
    return max(abs(x - y) / max(abs(x), 1e-12) for x, y in zip(a, b))


@pytest.fixture
def supported(monkeypatch):
    monkeypatch.setattr(precision, "bf16_supported", lambda device: True)


def test_detection_reads_the_bf16_matrix_units(monkeypatch):
    precision.cpu_bf16.cache_clear()
    monkeypatch.setattr(torch._C._cpu, "_get_cpu_capability", lambda: {"amx_bf16": False, "avx512_bf16": False})
    monkeypatch.setattr(precision, "cpu_flags", lambda: frozenset({"avx2", "avx512f"}))
    assert precision.cpu_bf16() is None and not precision.bf16_supported("cpu")
    assert precision.describe("cpu") == "fp32 (cpu has no bf16 matrix units)"
    assert isinstance(precision.autocast("cpu"), type(precision.contextlib.nullcontext()))
    precision.cpu_bf16.cache_clear()
    monkeypatch.setattr(precision, "cpu_flags", lambda: frozenset({"avx512_bf16"}))  # /proc/cpuinfo alone
    assert precision.cpu_bf16() == "avx512_bf16" and precision.use_bf16("cpu", True)
    assert not precision.use_bf16("cpu", False) and precision.describe("cpu", False) == "fp32 (--no-bf16)"
    precision.cpu_bf16.cache_clear()
    monkeypatch.setattr(torch._C._cpu, "_get_cpu_capability", lambda: {"amx_bf16": True})
    assert precision.cpu_bf16() == "amx_bf16" and precision.describe("cpu") == "bf16 autocast (CPU amx_bf16)"
    precision.cpu_bf16.cache_clear()
    with precision.autocast("cpu", True):
        assert torch.is_autocast_enabled("cpu") == precision.use_bf16("cpu")


def test_pretraining_losses_bf16_within_tolerance(supported, sample_lines, tiny_wordpiece, tmp_path):
    from biotok_train.pretrain.loop import pretrain
    from biotok_train.pretrain.prepare import prepare

    (tmp_path / "c.txt").write_text("\n".join(sample_lines[:40]) + "\n", encoding="utf-8")
    data = prepare([str(tmp_path / "c.txt")], tiny_wordpiece, PrepareConfig(seq_len=32), tmp_path / "d",
                   progress=False).path
    runs = {}
    for bf16 in (False, True):
        cfg = PretrainConfig(size="tiny", steps=4, batch_size=4, log_every=1, device="cpu", bf16=bf16,
                             optim=OptimConfig(lr=1e-3, warmup=0.0))
        runs[bf16] = pretrain(data, cfg, tmp_path / f"run-{bf16}", progress=False).losses
    assert runs[False] != runs[True]  # bf16 really ran
    assert _rel(runs[False], runs[True]) <= BF16


def test_finetuning_bf16_gives_the_same_f1_and_losses_within_tolerance(supported, tiny_wordpiece, tmp_path):
    from transformers import BertConfig, BertForMaskedLM

    from biotok.datasets.bio import Sentence
    from biotok_train.finetune import finetune
    from biotok_train.hf_models import load_model_tokenizer
    from biotok_train.tasks.examples import TaskData

    model = tmp_path / "tiny-bert"
    shutil.copytree(tiny_wordpiece, model)
    tok = load_model_tokenizer(model)
    torch.manual_seed(0)
    BertForMaskedLM(BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                               intermediate_size=64, max_position_embeddings=130, pad_token_id=tok.pad_id)
                    ).save_pretrained(model)
    words = {1: "le patient présente une fièvre aiguë depuis trois jours".split(),  # a two-word entity
             0: "le patient présente une fièvre depuis hier soir seulement".split()}
    ex = [Sentence(tuple(words[i % 2]), ("O",) * 4 + (("B-DISO", "I-DISO") if i % 2 else ("B-DISO", "O")) + ("O",) * 3,
                   f"s{i}") for i in range(24)]
    data = TaskData("tiny-ner", "ner", ("DISO",), tuple(ex[:16]), tuple(ex[16:20]), tuple(ex[20:]))
    res = {}
    for bf16 in (False, True):
        cfg = FinetuneConfig(epochs=8, batch_size=4, max_length=48, patience=8, bf16=bf16,
                             optim=OptimConfig(lr=3e-3, warmup=0.0))
        res[bf16] = finetune(model, data, cfg, progress=False)
    losses = {k: [h["train_loss"] for h in r.history] for k, r in res.items()}
    assert losses[False] != losses[True] and _rel(losses[False], losses[True]) <= BF16
    assert res[True].micro_f1 == pytest.approx(res[False].micro_f1, abs=BF16)
    assert res[False].micro_f1 > 0.5  # the task was learned: the comparison means something


def test_probe_bits_per_character_bf16_within_tolerance(supported, sample_lines):
    import numpy as np

    from biotok_train.probe.model import build_model, doc_bits, train

    rng = np.random.default_rng(0)
    stream = rng.integers(0, 200, size=8 * 32 * 20).astype(np.int64)
    stream[::3] = 7  # a pattern worth learning
    docs = [stream[i * 50:(i + 1) * 50] for i in range(8)]
    bits = {}
    for bf16 in (False, True):
        cfg = ProbeConfig(steps=20, batch_size=8, seq_len=32, hidden=32, heads=2, layers=1, lr=3e-3, bf16=bf16)
        model = build_model(cfg, 201, seed=0)
        train(model, stream, cfg, seed=0)
        assert model.biotok_bf16 is bf16
        bits[bf16] = doc_bits(model, docs, 200, cfg.seq_len)
    assert not np.array_equal(bits[False], bits[True])
    assert abs(bits[True].sum() - bits[False].sum()) / bits[False].sum() <= BF16


def test_the_probe_recipe_names_bf16_only_when_on():
    assert ProbeConfig(bf16=True).recipe()["bf16"] is True
    assert "bf16" not in ProbeConfig(bf16=False).recipe()  # the recipe of every fp32 probe written before
