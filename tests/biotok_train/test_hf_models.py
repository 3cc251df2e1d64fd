"""Any encoder is a base: a bare ``BertModel`` (and the sentence-transformers layout) gets a new
masked-LM head built by transformers, for transfer, ``mlm --init-from``, fill-mask and fine-tuning."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from biotok.formats import load  # noqa: E402
from biotok_train.hf_models import encoder_dir, load_masked_lm, load_model, load_model_tokenizer  # noqa: E402

torch.set_num_threads(1)
TOKENIZER_FILES = ("tokenizer.json", "special_tokens_map.json")


def _bert_model(d: Path, tokenizer: Path) -> Path:
    """A tiny bare ``BertModel`` (no head) saved with a biotok WordPiece, as a user would have it."""
    tok = load(tokenizer)
    torch.manual_seed(0)
    cfg = transformers.BertConfig(vocab_size=tok.vocab_size, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                  intermediate_size=32, max_position_embeddings=80, pad_token_id=tok.pad_id)
    transformers.BertModel(cfg).save_pretrained(str(d))
    for name in TOKENIZER_FILES:
        shutil.copyfile(tokenizer / name, d / name)
    return d


@pytest.fixture()
def bare(tmp_path, tiny_wordpiece) -> Path:
    return _bert_model(tmp_path / "bare", tiny_wordpiece)


def _sentence_transformers(root: Path, tokenizer: Path, sub: str) -> Path:
    """The sentence-transformers layout: modules.json, 1_Pooling/, the transformer in ``sub`` ('' = root)."""
    root.mkdir(parents=True)
    _bert_model(root / sub if sub else root, tokenizer)
    (root / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": sub, "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]))
    (root / "1_Pooling").mkdir()
    (root / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": 16}))
    (root / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 64}))
    return root


def test_bare_encoder_gets_a_tied_head_initialised_as_bert_does(bare, caplog):
    encoder = transformers.BertModel.from_pretrained(str(bare))
    with caplog.at_level(logging.INFO, logger="biotok_train.hf_models"):
        model = load_masked_lm(bare)
    assert type(model).__name__ == "BertForMaskedLM"
    lines = [r.getMessage() for r in caplog.records if "bare encoder" in r.getMessage()]
    assert len(lines) == 1 and "BertModel" in lines[0] and "masked-LM head" in lines[0]
    # every encoder weight loaded (the pooler is not part of a masked LM)
    enc = {k: v for k, v in encoder.state_dict().items() if not k.startswith("pooler.")}
    mine = model.base_model.state_dict()
    assert set(enc) <= set(mine) and all(torch.equal(v, mine[k]) for k, v in enc.items())
    # the head: decoder tied to the input embeddings, bias 0, LayerNorm 1/0, dense normal(0, 0.02)
    head = model.cls.predictions
    assert head.decoder.weight is model.get_input_embeddings().weight
    assert torch.count_nonzero(head.bias) == 0
    assert torch.equal(head.transform.LayerNorm.weight, torch.ones(16))
    assert 0.005 < float(head.transform.dense.weight.detach().std()) < 0.05
    # the same head on every load (byte-identical reruns), whatever the global seed
    torch.manual_seed(123)
    again = load_masked_lm(bare)
    assert torch.equal(again.cls.predictions.transform.dense.weight, head.transform.dense.weight)


def test_a_model_with_its_head_loads_as_saved(tmp_path, bare):
    full = tmp_path / "full"
    m = load_masked_lm(bare)
    m.save_pretrained(str(full))
    assert torch.equal(load_masked_lm(full).cls.predictions.transform.dense.weight,
                       m.cls.predictions.transform.dense.weight)


@pytest.mark.parametrize("sub", ["", "0_Transformer"])
def test_sentence_transformers_layout(tmp_path, tiny_wordpiece, sub):
    root = _sentence_transformers(tmp_path / "st", tiny_wordpiece, sub)
    assert encoder_dir(root) == (root / sub if sub else root)
    tok = load_model_tokenizer(root)
    assert tok.vocab_size == load(tiny_wordpiece).vocab_size
    assert type(load_masked_lm(root)).__name__ == "BertForMaskedLM"
    ner = load_model(root, "AutoModelForTokenClassification", num_labels=3)  # finetune's loader
    assert ner.config.num_labels == 3


def test_transfer_moves_a_bare_encoder(tmp_path, bare, tiny_unigram):
    from biotok_train.config import TransferConfig
    from biotok_train.transfer import transfer_to

    r = transfer_to(bare, tiny_unigram, tmp_path / "fvt", TransferConfig(method="fvt"))
    assert r.counts["composed"] > 0
    out = transformers.AutoModelForMaskedLM.from_pretrained(str(tmp_path / "fvt"))
    assert out.config.architectures == ["BertForMaskedLM"]
    assert out.get_input_embeddings().weight.shape[0] == load(tiny_unigram).vocab_size
    assert out.cls.predictions.decoder.weight is out.get_input_embeddings().weight


def test_mlm_init_from_a_bare_encoder(tmp_path, bare, tiny_wordpiece, sample_lines):
    from biotok_train.config import PrepareConfig, PretrainConfig
    from biotok_train.pretrain.loop import pretrain
    from biotok_train.pretrain.prepare import prepare

    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(sample_lines[:40]) + "\n", encoding="utf-8")
    data = prepare([str(corpus)], tiny_wordpiece, PrepareConfig(seq_len=64), tmp_path / "data", progress=False).path
    r = pretrain(data, PretrainConfig(steps=2, batch_size=4, log_every=1, device="cpu", init_from=str(bare)),
                 tmp_path / "run", progress=False)
    assert r.steps == 2
    saved = transformers.AutoModelForMaskedLM.from_pretrained(str(tmp_path / "run"))
    assert saved.config.architectures == ["BertForMaskedLM"]
