"""Continual pretraining (``--init-from``): the loss at step 0 is the checkpoint's own loss on the
same batch, the data must be of the checkpoint's tokenizer, and nothing is written on bad input."""

from __future__ import annotations

import json

import pytest

from tests._contract import assert_contract
from click.testing import CliRunner

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from biotok.errors import ConfigError  # noqa: E402
from biotok.formats import load  # noqa: E402
from biotok_train.cli import main  # noqa: E402
from biotok_train.errors import TokenizerMismatchError  # noqa: E402
from biotok_train.pretrain.init import build_from, segmentation_fingerprint  # noqa: E402
from biotok_train.config import OptimConfig, PretrainConfig  # noqa: E402
from biotok_train.pretrain.loop import _mask_generator, pretrain  # noqa: E402
from biotok_train.pretrain.masking import mask_tokens  # noqa: E402
from biotok_train.pretrain.packed import PackedData  # noqa: E402
from biotok_train.config import PrepareConfig  # noqa: E402
from biotok_train.pretrain.prepare import prepare  # noqa: E402
from biotok_train.hf_models import fast_tokenizer  # noqa: E402

torch.set_num_threads(1)
FAST = dict(batch_size=4, log_every=1, device="cpu", bf16=False)  # compared with fp32 references


@pytest.fixture(scope="module")
def corpus(sample_lines, tmp_path_factory):
    p = tmp_path_factory.mktemp("icorpus") / "c.txt"
    p.write_text("\n".join(sample_lines[:60]) + "\n", encoding="utf-8")
    return p


@pytest.fixture(scope="module")
def wp_data(corpus, tiny_wordpiece, tmp_path_factory):
    out = tmp_path_factory.mktemp("idata") / "wp"
    return prepare([str(corpus)], tiny_wordpiece, PrepareConfig(seq_len=64), out, progress=False).path


@pytest.fixture(scope="module")
def ug_data(corpus, tiny_unigram, tmp_path_factory):
    out = tmp_path_factory.mktemp("idata") / "ug"
    return prepare([str(corpus)], tiny_unigram, PrepareConfig(seq_len=64), out, progress=False).path


@pytest.fixture(scope="module")
def bert_run(wp_data, tmp_path_factory):
    """A biotok BERT run (3 steps), made dropout-free so that train and eval losses agree."""
    out = tmp_path_factory.mktemp("irun") / "bert"
    pretrain(wp_data, PretrainConfig(steps=3, **FAST, optim=OptimConfig(lr=1e-3)), out, progress=False)
    cfg = json.loads((out / "config.json").read_text())
    cfg.update(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    (out / "config.json").write_text(json.dumps(cfg))
    return out


def _step0_reference(model, data, seed: int, batch_size: int = 4) -> float:
    """The HF model's own loss on the batch and masks the loop draws at step 0."""
    packed = PackedData(data)
    batch = packed.batch(packed.indices(0, batch_size, seed), sop=False, seed=seed)
    m = mask_tokens(batch.input_ids, batch.word_starts, batch.special, mask_id=packed.mask_id,
                    vocab_size=packed.vocab_size, prob=0.15, wwm=False, mask_frac=0.8, random_frac=0.1,
                    generator=_mask_generator(seed, 0, 0, 0))
    types = batch.token_type_ids if model.config.type_vocab_size > 1 else torch.zeros_like(batch.token_type_ids)
    with torch.no_grad():
        return float(model.eval()(input_ids=m.input_ids, attention_mask=batch.attention_mask,
                                  token_type_ids=types, labels=m.labels).loss)


def test_bert_loss_at_step_0_is_the_checkpoint_loss(bert_run, wp_data, tmp_path):
    r = pretrain(wp_data, PretrainConfig(steps=2, seed=7, init_from=str(bert_run), **FAST, optim=OptimConfig(lr=1e-3)),
                 tmp_path / "cont", progress=False)
    base = transformers.AutoModelForMaskedLM.from_pretrained(str(bert_run))
    assert r.losses[0] == pytest.approx(_step0_reference(base, wp_data, seed=7), abs=1e-4)
    # a fresh model of the same shape starts far higher: the weights were really loaded
    fresh = pretrain(wp_data, PretrainConfig(steps=1, seed=7, **FAST, optim=OptimConfig(lr=1e-3)), tmp_path / "fresh",
                     progress=False)
    assert fresh.losses[0] > r.losses[0] + 0.1
    meta = json.loads((tmp_path / "cont" / "biotok_pretrain.json").read_text())
    assert meta["config"]["init_from"] == str(bert_run)
    back = transformers.AutoModelForMaskedLM.from_pretrained(str(tmp_path / "cont"))
    assert back.config.vocab_size == base.config.vocab_size


def test_roberta_with_one_token_type_continues(tiny_unigram, ug_data, tmp_path):
    """A RoBERTa checkpoint (type_vocab_size 1, positions after the pad id) on [CLS] A [SEP] B [SEP] data."""
    tok = load(tiny_unigram)
    torch.manual_seed(0)
    cfg = transformers.RobertaConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=64, type_vocab_size=1,
                                     max_position_embeddings=64 + tok.pad_id + 1, pad_token_id=tok.pad_id,
                                     hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    base_dir = tmp_path / "roberta"
    transformers.RobertaForMaskedLM(cfg).save_pretrained(str(base_dir))
    fast_tokenizer(tok, type_vocab_size=1, model_max_length=64).save_pretrained(str(base_dir))
    r = pretrain(ug_data, PretrainConfig(steps=1, seed=3, init_from=str(base_dir), **FAST), tmp_path / "c",
                 progress=False)
    base = transformers.AutoModelForMaskedLM.from_pretrained(str(base_dir))
    assert r.losses[0] == pytest.approx(_step0_reference(base, ug_data, seed=3), abs=1e-4)
    # the run's tokenizer frames pairs as RoBERTa does: no segment B of type 1 the model lacks
    fast = transformers.AutoTokenizer.from_pretrained(str(tmp_path / "c"))
    enc = fast("le patient", "une fièvre")
    assert "token_type_ids" not in enc and enc["input_ids"].count(tok.sep_id) == 3
    continued = transformers.AutoModelForMaskedLM.from_pretrained(str(tmp_path / "c"))
    continued(**fast("le patient", "une fièvre", return_tensors="pt"))  # runs: no type id out of range


def test_transferred_model_continues_on_data_of_the_new_tokenizer(bert_run, tiny_unigram, ug_data, tmp_path):
    """transfer then --init-from: the data prepared with the NEW tokenizer itself is accepted."""
    from biotok_train.config import TransferConfig
    from biotok_train.transfer import transfer_to

    transfer_to(bert_run, tiny_unigram, tmp_path / "fvt", TransferConfig(method="fvt"))
    assert segmentation_fingerprint(load(tmp_path / "fvt")) == segmentation_fingerprint(load(tiny_unigram))
    r = pretrain(ug_data, PretrainConfig(steps=1, seed=1, init_from=str(tmp_path / "fvt"), **FAST),
                 tmp_path / "c", progress=False)
    base = transformers.AutoModelForMaskedLM.from_pretrained(str(tmp_path / "fvt"))
    assert r.losses[0] == pytest.approx(_step0_reference(base, ug_data, seed=1), abs=1e-4)


def test_electra_init_from_loads_both_models_with_shared_embeddings(wp_data, tmp_path):
    run = tmp_path / "electra"
    pretrain(wp_data, PretrainConfig(objective="electra", steps=2, **FAST), run, progress=False)
    module = build_from(run, "electra", 64)
    disc = transformers.ElectraForPreTraining.from_pretrained(str(run))
    gen = transformers.ElectraForMaskedLM.from_pretrained(str(run / "generator"))
    assert all(torch.equal(v, disc.state_dict()[k]) for k, v in module.discriminator.state_dict().items())
    for k, v in module.generator.state_dict().items():
        if "embeddings" not in k and k != "generator_lm_head.weight":
            assert torch.equal(v, gen.state_dict()[k]), k
    assert module.generator.electra.embeddings is module.discriminator.electra.embeddings
    r = pretrain(wp_data, PretrainConfig(objective="electra", steps=1, init_from=str(run), **FAST),
                 tmp_path / "cont", progress=False)
    assert r.steps == 1 and (tmp_path / "cont" / "generator" / "config.json").is_file()


def test_data_of_another_tokenizer_is_refused_before_anything_is_written(bert_run, ug_data, tmp_path):
    with pytest.raises(TokenizerMismatchError, match="prepare the data with --tokenizer"):
        pretrain(ug_data, PretrainConfig(steps=1, init_from=str(bert_run), **FAST), tmp_path / "x", progress=False)
    with pytest.raises(ConfigError, match="ELECTRA"):
        pretrain(ug_data, PretrainConfig(objective="electra", steps=1, init_from=str(bert_run), **FAST),
                 tmp_path / "x", progress=False)
    not_a_model = tmp_path / "not-a-model"
    not_a_model.mkdir()
    with pytest.raises(ConfigError, match="no config.json"):
        pretrain(ug_data, PretrainConfig(steps=1, init_from=str(not_a_model), **FAST), tmp_path / "x", progress=False)
    assert not (tmp_path / "x").exists()


def test_cli_mlm_init_from(bert_run, wp_data, ug_data, tmp_path):
    r = CliRunner().invoke(main, ["mlm", str(wp_data), "--init-from", str(bert_run), "--steps", "2",
                                  "--batch-size", "4", "--device", "cpu", "--out", str(tmp_path / "c"),
                                  "--no-progress"])
    assert r.exit_code == 0, r.output
    assert "2 steps" in r.output
    r = CliRunner().invoke(main, ["mlm", str(ug_data), "--init-from", str(bert_run), "--steps", "2",
                                  "--device", "cpu", "--out", str(tmp_path / "d"), "--no-progress"])
    assert_contract(r, "biotok-train", "prepared with tokenizer")
    assert not (tmp_path / "d").exists()
