"""The pretraining loop on CPU: loss goes down, exact resume, SIGINT checkpoint, HF-loadable output."""

from __future__ import annotations

import json
import os
import signal

import pytest

torch = pytest.importorskip("torch")

import biotok_train.pretrain.loop as loop  # noqa: E402
from biotok.errors import ConfigError, OutputExistsError  # noqa: E402
from biotok_train.errors import DataError, TokenizerMismatchError  # noqa: E402
from biotok_train.config import OptimConfig, PretrainConfig  # noqa: E402
from biotok_train.pretrain.loop import pretrain  # noqa: E402
from biotok_train.config import PrepareConfig  # noqa: E402
from biotok_train.pretrain.prepare import prepare  # noqa: E402

torch.set_num_threads(1)
FAST = dict(size="tiny", batch_size=4, log_every=2, device="cpu")


@pytest.fixture(scope="module")
def data(sample_lines, tiny_wordpiece, tmp_path_factory):
    d = tmp_path_factory.mktemp("ldata")
    (d / "c.txt").write_text("\n".join(sample_lines[:80]) + "\n", encoding="utf-8")
    return prepare([str(d / "c.txt")], tiny_wordpiece, PrepareConfig(seq_len=64), d / "data", progress=False).path


def test_loss_goes_down(data, tmp_path):
    cfg = PretrainConfig(steps=30, **{**FAST, "batch_size": 8, "log_every": 5}, optim=OptimConfig(lr=2e-3, warmup=0.1))
    r = pretrain(data, cfg, tmp_path / "run", progress=False)
    assert len(r.losses) == 30 and r.steps == 30 and r.final_loss == r.losses[-1]
    assert sum(r.losses[-5:]) / 5 < sum(r.losses[:5]) / 5 - 0.5
    assert r.tokens_per_second > 0 and r.mfu is None  # CPU: no MFU
    rows = [json.loads(l) for l in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [row["step"] for row in rows] == [5, 10, 15, 20, 25, 30]
    assert {"loss", "mlm_acc", "lr", "tokens_per_s", "grad_norm"} <= rows[-1].keys()
    from biotok_train.pretrain.plot import plot_run

    png = plot_run(tmp_path / "run")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_resume_gives_the_same_losses(data, tmp_path):
    cfg = PretrainConfig(steps=6, wwm=True, **FAST, optim=OptimConfig(name="lamb", lr=1e-3, warmup=2))
    straight = pretrain(data, cfg, tmp_path / "a", progress=False)
    first = pretrain(data, cfg, tmp_path / "b", progress=False, stop_after=3)
    assert first.steps == 3 and len(first.losses) == 3
    resumed = pretrain(data, cfg, tmp_path / "b", resume=True, progress=False)
    assert resumed.losses == straight.losses  # exact, step by step
    from safetensors.torch import load_file

    wa = load_file(tmp_path / "a" / "model.safetensors")
    wb = load_file(tmp_path / "b" / "model.safetensors")
    assert all(torch.equal(wa[k], wb[k]) for k in wa)
    rows = [json.loads(l)["step"] for l in (tmp_path / "b" / "metrics.jsonl").read_text().splitlines()]
    assert rows == sorted(set(rows)) and rows[-1] == 6


def test_resume_reads_a_checkpoint_saved_before_optim_was_nested(data, tmp_path):
    from biotok_train.pretrain import checkpoint as ckpt

    cfg = PretrainConfig(steps=4, **FAST, optim=OptimConfig(lr=1e-3))
    pretrain(data, cfg, tmp_path / "run", progress=False, stop_after=2)
    state = ckpt.load_state(tmp_path / "run")
    flat = {k: v for k, v in state["config"].items() if k != "optim"}  # the shape of biotok <= round 2
    flat.update(optim="adamw", lr=1e-3, warmup=0.06, schedule="linear", weight_decay=0.01, max_grad_norm=1.0,
                adam_eps=1e-6, betas=[0.9, 0.999])
    ckpt.save_state(tmp_path / "run", {**state, "config": flat})
    assert PretrainConfig.from_dict(flat) == cfg
    assert pretrain(data, cfg, tmp_path / "run", resume=True, progress=False).steps == 4
    with pytest.raises(ConfigError, match="different batch_size"):  # the old shape is still checked
        ckpt.save_state(tmp_path / "run", {**ckpt.load_state(tmp_path / "run"), "config": flat})
        pretrain(data, PretrainConfig(steps=6, **{**FAST, "batch_size": 2}), tmp_path / "run", resume=True,
                 progress=False)


def test_sigint_saves_a_checkpoint(data, tmp_path, monkeypatch):
    calls = {"n": 0}
    real = loop.mask_tokens

    def interrupting(*a, **k):
        calls["n"] += 1
        if calls["n"] == 2:  # during step 2
            os.kill(os.getpid(), signal.SIGINT)
        return real(*a, **k)

    monkeypatch.setattr(loop, "mask_tokens", interrupting)
    cfg = PretrainConfig(steps=10, **FAST, optim=OptimConfig(lr=1e-3))
    with pytest.raises(KeyboardInterrupt):
        pretrain(data, cfg, tmp_path / "run", progress=False)
    state = torch.load(tmp_path / "run" / "checkpoint" / "state.pt", weights_only=False)
    assert state["step"] == 2 and len(state["losses"]) == 2
    monkeypatch.setattr(loop, "mask_tokens", real)
    r = pretrain(data, cfg, tmp_path / "run", resume=True, progress=False)
    assert r.steps == 10 and len(r.losses) == 10


@pytest.mark.parametrize("objective,arch", [("mlm", "albert"), ("electra", "bert")])
def test_albert_and_electra_save_hf_models(data, tmp_path, objective, arch):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    cfg = PretrainConfig(objective=objective, arch=arch, steps=2, wwm=True, **FAST,
                         optim=OptimConfig(name="lamb", lr=1e-3))
    r = pretrain(data, cfg, tmp_path / "run", progress=False)
    assert len(r.losses) == 2 and all(x == x for x in r.losses)
    model = AutoModelForMaskedLM.from_pretrained(tmp_path / "run")
    tok = AutoTokenizer.from_pretrained(tmp_path / "run")
    enc = tok("Le patient présente une fièvre.", "Deuxième segment.", return_tensors="pt")
    assert enc["input_ids"][0, 0].item() == tok.cls_token_id and 1 in enc["token_type_ids"][0].tolist()
    assert model(**enc).logits.shape[-1] == tok.vocab_size or model.config.vocab_size == len(tok)
    if objective == "electra":
        assert (tmp_path / "run" / "generator" / "model.safetensors").is_file()
        from transformers import ElectraForPreTraining

        ElectraForPreTraining.from_pretrained(tmp_path / "run")
    meta = json.loads((tmp_path / "run" / "biotok_pretrain.json").read_text())
    assert meta["rank_weight_sha256"] and meta["config"]["objective"] == objective


def test_refusals(data, tmp_path, sample_lines):
    cfg = PretrainConfig(steps=1, **FAST)
    pretrain(data, cfg, tmp_path / "run", progress=False)
    with pytest.raises(OutputExistsError, match="--resume"):
        pretrain(data, cfg, tmp_path / "run", progress=False)
    with pytest.raises(ConfigError, match="size"):
        pretrain(data, PretrainConfig(size="huge", steps=1), tmp_path / "x", progress=False)
    with pytest.raises(DataError, match="not found"):
        pretrain(tmp_path / "nope", cfg, tmp_path / "y", progress=False)
    # a checkpoint trained on another vocabulary cannot be resumed on this data
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(sample_lines[:50], trainers.WordPieceTrainer(
        vocab_size=300, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]))
    tok.save(str(tmp_path / "other.json"))
    (tmp_path / "c.txt").write_text("\n".join(sample_lines[:10]) + "\n", encoding="utf-8")
    other = prepare([str(tmp_path / "c.txt")], tmp_path / "other.json", PrepareConfig(seq_len=64), tmp_path / "od",
                    progress=False)
    with pytest.raises(TokenizerMismatchError, match="another tokenizer"):
        pretrain(other.path, cfg, tmp_path / "run", resume=True, progress=False)


def test_out_of_memory_at_start_says_what_to_lower(data, tmp_path, monkeypatch):
    from biotok_train.errors import OutOfMemoryAtStartError
    from biotok_train.pretrain.models import MLMModule

    def oom(self, **kw):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(MLMModule, "forward", oom)
    with pytest.raises(OutOfMemoryAtStartError, match="lower --batch-size"):
        pretrain(data, PretrainConfig(steps=2, **FAST), tmp_path / "run", progress=False)


def test_mfu_uses_the_one_flops_formula(data, tmp_path):
    """With a peak given (--peak-tflops), MFU is tokens/s x biotok_train.pretrain.flops' FLOPs per token / peak."""
    from biotok_train.pretrain import flops
    from biotok_train.pretrain.models import Vocab, build
    from biotok_train.pretrain.packed import PackedData

    r = pretrain(data, PretrainConfig(steps=4, **FAST, peak_tflops=1e-3), tmp_path / "run", progress=False)
    packed = PackedData(data)
    vocab = Vocab(packed.vocab_size, packed.pad_id, packed.cls_id, packed.sep_id, packed.mask_id)
    per_token = flops.module_flops_per_token(build("mlm", "bert", "tiny", vocab, packed.seq_len), packed.seq_len, 0.15)
    assert r.mfu == pytest.approx(r.tokens_per_second * per_token / 1e9)


def test_state_pt_is_the_same_whatever_the_process_drew_before(data, tmp_path):
    """Same inputs and seed, same checkpoint: the numpy and Python generators state.pt saves are
    seeded by the run, not left as whatever the process drew before it."""
    import random

    import numpy as np
    from biotok_train.pretrain import checkpoint as ckpt

    cfg = PretrainConfig(steps=4, **FAST)
    states = []
    for name, draw in (("a", 1), ("b", 7)):
        np.random.rand(draw), [random.random() for _ in range(draw)]
        pretrain(data, cfg, tmp_path / name, progress=False, stop_after=2)
        states.append(ckpt.load_state(tmp_path / name)["rng"])
    a, b = states
    assert torch.equal(a["numpy"]["keys"], b["numpy"]["keys"]) and a["numpy"]["pos"] == b["numpy"]["pos"]
    assert a["python"] == b["python"]
