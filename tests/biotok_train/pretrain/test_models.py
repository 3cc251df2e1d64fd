"""Model configs by size, the MLM/SOP training module, and the ELECTRA generator/discriminator."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from biotok.errors import ConfigError  # noqa: E402
from biotok_train.pretrain.electra import ElectraModule, gumbel_sample  # noqa: E402
from biotok_train.pretrain.models import (  # noqa: E402
    Vocab,
    albert_config,
    bert_config,
    build,
    electra_configs,
    main_model,
    shape,
)

torch.set_num_threads(1)
VOCAB = Vocab(size=300, pad_id=0, cls_id=2, sep_id=3, mask_id=4)


def _inputs(seed=0, B=3, L=16, electra=False):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, VOCAB.size, (B, L), generator=g)
    ids[:, 0], ids[:, -1] = VOCAB.cls_id, VOCAB.sep_id
    labels = torch.full_like(ids, -100)
    sel = torch.rand(ids.shape, generator=g) < 0.3
    sel[:, 0] = sel[:, -1] = False
    sel[:, 1] = True
    labels[sel] = ids[sel]
    masked = ids.masked_fill(sel, VOCAB.mask_id)
    return dict(input_ids=masked, attention_mask=torch.ones_like(ids), token_type_ids=torch.zeros_like(ids),
                labels=labels, sop_labels=torch.tensor([0, 1, 0])[:B], original_ids=ids)


def test_sizes():
    assert shape("bert", "base") == (12, 768, 12, 3072, None)
    c = bert_config("base", VOCAB, 512)
    assert (c.num_hidden_layers, c.hidden_size, c.vocab_size, c.pad_token_id) == (12, 768, 300, 0)
    assert c._attn_implementation == "sdpa"
    a = albert_config("base", VOCAB, 128)
    assert a.embedding_size == 128 and a.num_hidden_groups == 1
    d, g = electra_configs("base", VOCAB, 512)
    assert g.hidden_size == 256 and d.hidden_size == 768 and g.embedding_size == d.embedding_size
    d, g = electra_configs("small", VOCAB, 128)
    assert g.hidden_size == round(256 / 3 / 16) * 16 and g.embedding_size == 128
    for arch, size in (("bert", "huge"), ("gpt", "tiny")):
        with pytest.raises(ConfigError, match="unknown"):
            shape(arch, size)


def test_mlm_module_loss_equals_the_hf_model_loss():
    """Computing the head at masked positions only gives exactly BertForMaskedLM's loss."""
    torch.manual_seed(0)
    module = build("mlm", "bert", "tiny", VOCAB, 16).eval()
    x = _inputs()
    ours = module(**x)
    ref = module.model(input_ids=x["input_ids"], attention_mask=x["attention_mask"],
                       token_type_ids=x["token_type_ids"], labels=x["labels"]).loss
    assert ours["loss"].item() == pytest.approx(ref.item(), rel=1e-5)
    assert 0.0 <= ours["mlm_acc"].item() <= 1.0


def test_albert_mlm_plus_sop_and_shared_layers():
    torch.manual_seed(0)
    module = build("mlm", "albert", "tiny", VOCAB, 16).eval()
    x = _inputs()
    out = module(**x)
    ref = module.model(input_ids=x["input_ids"], attention_mask=x["attention_mask"],
                       token_type_ids=x["token_type_ids"], labels=x["labels"],
                       sentence_order_label=x["sop_labels"]).loss
    assert out["loss"].item() == pytest.approx(ref.item(), rel=1e-5)
    assert len(module.model.albert.encoder.albert_layer_groups) == 1
    assert module.model.albert.embeddings.word_embeddings.embedding_dim == 128


def test_electra_shares_embeddings_and_ties_the_generator_head():
    torch.manual_seed(0)
    m = build("electra", "bert", "tiny", VOCAB, 16)
    assert isinstance(m, ElectraModule) and main_model(m) is m.discriminator
    assert m.generator.electra.embeddings is m.discriminator.electra.embeddings
    assert m.generator.generator_lm_head.weight is m.discriminator.electra.embeddings.word_embeddings.weight
    assert m.generator.config.hidden_size * 3 == pytest.approx(m.discriminator.config.hidden_size, abs=16)
    out = m(**_inputs(electra=True))
    assert out["loss"].item() == pytest.approx(out["mlm_loss"].item() + 50 * out["rtd_loss"].item(), rel=1e-5)


def test_no_gradient_through_sampling():
    """The generator's encoder gets the same gradient whatever the RTD weight: only from MLM."""
    x = _inputs(electra=True)
    grads = []
    for weight in (50.0, 5000.0):
        torch.manual_seed(0)
        m = build("electra", "bert", "tiny", VOCAB, 16, rtd_weight=weight).eval()
        torch.manual_seed(1)
        m(**x)["loss"].backward()
        grads.append(m.generator.electra.encoder.layer[0].attention.self.query.weight.grad.clone())
        disc_grad = m.discriminator.electra.encoder.layer[0].attention.self.query.weight.grad
        assert disc_grad.abs().sum() > 0
    assert torch.equal(grads[0], grads[1])


def test_gumbel_sampling_follows_the_softmax():
    logits = torch.log(torch.tensor([[0.7, 0.2, 0.1]])).repeat(20000, 1)
    s = gumbel_sample(logits, torch.Generator().manual_seed(0))
    freq = torch.bincount(s, minlength=3).float() / len(s)
    assert torch.allclose(freq, torch.tensor([0.7, 0.2, 0.1]), atol=0.02)
