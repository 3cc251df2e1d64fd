"""Give a pretrained masked-LM a new vocabulary: rebuild its embeddings instead of starting over.

``transfer(model_dir, new_tokenizer, TransferConfig(method=...))`` rebuilds the input
embeddings, the tied output embeddings and the MLM output bias of a Hugging Face masked-LM
(BERT, RoBERTa/CamemBERT/XLM-R, ALBERT, DeBERTa-v2/v3, ELECTRA generator + discriminator) for the vocabulary
of any tokenizer ``biotok.load`` reads. Each row of the new vocabulary is one of:

* **copied** -- the piece's marker-free form exists in the old vocabulary with the same
  word-boundary status ('▁mot', 'mot' in WordPiece and 'Ġmot' are one form, word start;
  '##ot', 'ot' in SentencePiece and 'ot' in byte-level BPE are one form, continuation): the old
  row and bias, copied exactly. Forms are compared only when both vocabularies mark the same
  boundary (a word *start* for '▁', '##', 'Ġ'; a word *end* for '</w>');
* **special** -- a special token of the new tokenizer takes the old special token of the same
  role (cls/bos, sep/eos, pad, unk, mask; cls and bos, sep and eos stand in for each other);
* **composed** (``fvt``, Fast Vocabulary Transfer, Gee et al. 2022) -- the mean of the old rows
  (and biases) of the piece's segmentation by the OLD tokenizer. A word-start piece is segmented
  as a word: the old tokenizer's whole pipeline on the form (with a leading space for
  byte-level BPE). A continuation piece is segmented as the inside of a word: the old model
  directly on the normalized form -- WordPiece on ``'##' + form`` (so every piece is a '##'
  continuation), SentencePiece Unigram/BPE on the form without the '▁' prefix, byte-level BPE
  on the byte-mapped form without 'Ġ'. With a '</w>' vocabulary on either side, pieces are
  segmented as words. [UNK] pieces of a segmentation are dropped; a piece whose segmentation is
  empty or all [UNK] (and an unknown byte piece '<0xNN>') is left random;
* **random** -- drawn from the model's own initializer: normal(0, ``config.initializer_range``)
  for the embedding row, 0 for the bias (what ``_init_weights`` does), from a generator seeded
  with ``TransferConfig.seed``. With ``method='random'`` every row that is neither copied nor a
  special token is random (the control arm).

RoBERTa-style models number positions from ``pad_token_id + 1``; when the new pad id differs,
the position embeddings are shifted so every real position keeps its old row.
``write_transfer`` saves the model (safetensors), the new tokenizer (``AutoTokenizer`` loads it
without biotok) and ``transfer.json`` (counts, method, seed, input sha256, versions).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import platform
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biotok.errors import BiotokError, ConfigError
from biotok.tokenizer import BiotokTokenizer
from biotok.vocab import split_marker

from biotok.output import atomic_directory, check_writable

log = logging.getLogger(__name__)

METHODS = ("fvt", "random")
FORMAT = "biotok-transfer/1"
MARKER = "transfer.json"  # the file every transfer output holds: --force replaces only those
#: ``config.model_type`` values whose masked-LM heads are handled (input embeddings, tied
#: output embeddings, output bias); the ELECTRA discriminator is transferred with its generator.
SUPPORTED = ("bert", "roberta", "camembert", "xlm-roberta", "albert", "electra", "deberta-v2")
KINDS = ("copied", "special", "composed", "random")
_WORD_START_MARKERS = ("▁", "##", "Ġ")
_DUMMY = "a"  # glued before a continuation piece to segment it as the inside of a word
_BYTE_PIECE = re.compile(r"^<0x[0-9A-Fa-f]{2}>$")
# the role a special token is matched on, first found wins; then the stand-ins
_ROLE_ORDER = ("cls", "sep", "mask", "pad", "unk", "bos", "eos")
_STAND_IN = {"cls": "bos", "bos": "cls", "sep": "eos", "eos": "sep"}


class TransferError(BiotokError):
    """The model directory cannot be transferred (no MLM head, unsupported, unreadable)."""


@dataclass(frozen=True)
class TransferConfig:
    """How the rows that are not shared are initialized, and the seed of the random ones."""

    method: str = "fvt"  # "fvt" | "random"
    seed: int = 0

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ConfigError(f"unknown transfer method {self.method!r} (choose {', '.join(METHODS)})")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0:
            raise ConfigError(f"--seed must be a non-negative integer, not {self.seed!r}")


@dataclass(frozen=True)
class TransferPlan:
    """Where each row of the new vocabulary comes from: a kind and the old ids averaged."""

    kinds: tuple[str, ...]  # per new id: copied | special | composed | random
    sources: tuple[tuple[int, ...], ...]  # per new id: old ids (one for copied/special, () random)

    def count(self, kind: str) -> int:
        return sum(1 for k in self.kinds if k == kind)

    @property
    def counts(self) -> dict[str, int]:
        return {k: self.count(k) for k in KINDS}


@dataclass(frozen=True)
class TransferResult:
    """The model with the new vocabulary (in memory), how each row was made, and provenance."""

    model: Any  # the masked-LM (or the ELECTRA discriminator), new vocabulary
    generator: Any | None  # the ELECTRA generator, else None
    tokenizer: BiotokTokenizer  # the new tokenizer
    old_tokenizer: BiotokTokenizer
    config: TransferConfig
    plan: TransferPlan
    provenance: dict = field(default_factory=dict)

    @property
    def counts(self) -> dict[str, int]:
        return self.plan.counts


# --- the plan: pure vocabulary work --------------------------------------------------------------
def _boundary_kind(marker: str) -> str:
    return "start" if marker in _WORD_START_MARKERS else "end"


def _special_tokens(tok: BiotokTokenizer) -> dict[int, str]:
    """id -> content of every special token: the roles plus added tokens flagged special."""
    out: dict[int, str] = {}
    for token in tok.specials.values():
        i = tok.token_to_id(token)
        if i is not None:
            out[i] = token
    for i, t in tok.backend.get_added_tokens_decoder().items():
        if t.special:
            out[i] = t.content
    return out


def _old_role_id(old: BiotokTokenizer, new: BiotokTokenizer, token: str) -> int | None:
    """The old special token id of the first role that ``token`` plays in the new tokenizer."""
    roles = [r for r in _ROLE_ORDER if new.specials.get(r) == token]
    for r in roles + [_STAND_IN[r] for r in roles if r in _STAND_IN]:
        i = old.special_id(r)
        if i is not None:
            return i
    return None


def _normalized(tok: BiotokTokenizer, text: str) -> str:
    n = tok.backend.normalizer
    return n.normalize_str(text) if n is not None else text


def segment_as_old(old: BiotokTokenizer, form: str, word_start: bool) -> list[int]:
    """Old ids of ``form`` segmented by the old tokenizer as a word or as a word's inside.

    A word: the old pipeline on ``form`` (' ' + form for byte-level BPE). The inside of a word:
    the old pre-tokenizer on a dummy letter + ``form`` tells what stays glued to the word (for
    BERT, punctuation starts a word of its own); the glued part is segmented by the old model as
    a continuation (WordPiece on '##' + part, SentencePiece and byte-level BPE on the part
    without '▁'/'Ġ'), the rest as words. [UNK] ids are kept (the caller drops them).
    """
    marker = old.marker
    if word_start or marker == "</w>":
        text = " " + form if marker == "Ġ" else form
        return list(old.backend.encode(text, add_special_tokens=False).ids)
    model = old.backend.model
    pre = old.backend.pre_tokenizer
    glued = _normalized(old, _DUMMY + form)
    chunks = [c for c, _ in pre.pre_tokenize_str(glued)] if pre is not None else [glued.replace(" ", "▁")]
    if not chunks:
        return []
    first = chunks[0].lstrip("▁Ġ")
    if not first.startswith(_DUMMY):  # pragma: no cover - a normalizer that rewrites the dummy
        return list(old.backend.encode(form, add_special_tokens=False).ids)
    inside, rest = first[len(_DUMMY):], chunks[1:]
    ids: list[int] = []
    if inside:
        if marker == "##":
            prefix = getattr(model, "continuing_subword_prefix", "##") or "##"
            toks = model.tokenize(prefix + inside)
            if not toks or any(not t.value.startswith(prefix) for t in toks):
                ids.append(old.unk_id if old.unk_id is not None else -1)
            else:
                ids.extend(t.id for t in toks)
        else:
            ids.extend(t.id for t in model.tokenize(inside))
    for chunk in rest:
        ids.extend(t.id for t in model.tokenize(chunk))
    return [i for i in ids if i >= 0]


def plan_transfer(old: BiotokTokenizer, new: BiotokTokenizer, method: str = "fvt") -> TransferPlan:
    """For each new id: copied (same form and boundary), special (by role), composed or random."""
    if method not in METHODS:
        raise ConfigError(f"unknown transfer method {method!r} (choose {', '.join(METHODS)})")
    old_specials = _special_tokens(old)
    new_specials = _special_tokens(new)
    same_boundary = _boundary_kind(old.marker) == _boundary_kind(new.marker)
    old_forms: dict[tuple[str, bool], int] = {}
    for piece, i in sorted(old.get_vocab().items(), key=lambda kv: kv[1]):
        if i in old_specials:
            continue
        form, boundary = split_marker(piece, old.marker)
        if form:
            old_forms.setdefault((form, boundary), i)
    old_vocab = old.get_vocab()
    unk = old.unk_id
    n = new.vocab_size
    kinds: list[str] = ["random"] * n
    sources: list[tuple[int, ...]] = [()] * n
    id_to_piece = {i: p for p, i in new.get_vocab().items()}
    for i in range(n):
        piece = id_to_piece.get(i)
        if piece is None:
            continue
        if i in new_specials:
            j = _old_role_id(old, new, piece)
            if j is None and piece in old_vocab:  # an added special without a role, same string
                j = old_vocab[piece]
            if j is not None:
                kinds[i], sources[i] = "special", (j,)
            continue
        form, boundary = split_marker(piece, new.marker)
        if not form:  # the bare marker: a word boundary, not a spelling
            if piece in old_vocab:
                kinds[i], sources[i] = "copied", (old_vocab[piece],)
            continue
        j = old_forms.get((form, boundary)) if same_boundary else None
        if j is not None:
            kinds[i], sources[i] = "copied", (j,)
            continue
        if method != "fvt" or _BYTE_PIECE.match(piece):
            continue
        word_start = boundary if _boundary_kind(new.marker) == "start" else True
        ids = tuple(x for x in segment_as_old(old, form, word_start) if x != unk)
        if ids:
            kinds[i], sources[i] = "composed", ids
    return TransferPlan(tuple(kinds), tuple(sources))


# --- the model -------------------------------------------------------------------------------------
def _read_config(model_dir: Path) -> dict:
    f = model_dir / "config.json"
    if not model_dir.is_dir():
        raise TransferError(f"model directory not found: {model_dir}")
    if not f.is_file():
        raise TransferError(f"{model_dir} is not a Hugging Face model directory (no config.json)")
    try:
        return json.loads(f.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise TransferError(f"{f} is not valid JSON: {e}") from None


def _model_class(model_dir: Path, cfg: dict, *, generator: bool = False):
    """The transformers class to load: the saved architecture when it has an MLM head."""
    import transformers

    mtype = cfg.get("model_type")
    archs = cfg.get("architectures") or []
    if mtype not in SUPPORTED:
        raise TransferError(
            f"{model_dir}: unsupported architecture {mtype or 'unknown'!r} "
            f"({', '.join(archs) or 'no architectures listed'}); supported: {', '.join(SUPPORTED)}"
        )
    name = archs[0] if archs else None
    if name is None:
        return transformers.AutoModelForMaskedLM, False
    cls = getattr(transformers, name, None)
    if cls is None:
        raise TransferError(f"{model_dir}: unknown architecture class {name!r} in config.json")
    if name == "ElectraForPreTraining" and not generator:
        if not (model_dir / "generator" / "config.json").is_file():
            raise TransferError(
                f"{model_dir} holds an ELECTRA discriminator without a generator/ folder: it has no "
                "masked-LM head to transfer (give the run directory with generator/, or an ElectraForMaskedLM)"
            )
        return cls, True
    if not (name.endswith("ForMaskedLM") or name.endswith("ForPreTraining")):
        raise TransferError(
            f"{model_dir} has no masked-LM head (architecture {name}): transfer needs a "
            "...ForMaskedLM or ...ForPreTraining checkpoint"
        )
    return cls, False


def _load_model(cls, path: Path):
    from biotok_train.hf_models import quiet_transformers

    try:
        with quiet_transformers():
            return cls.from_pretrained(str(path))
    except (OSError, ValueError, RuntimeError) as e:
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise TransferError(f"cannot load the model in {path}: {first}") from None


def _weight_files(path: Path) -> list[Path]:
    return sorted(p for p in path.iterdir() if p.is_file() and (p.suffix in (".safetensors", ".bin")))


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _random_rows(n: int, dim: int, std: float, seed: int):
    import torch

    g = torch.Generator().manual_seed(seed)
    return torch.randn((n, dim), generator=g, dtype=torch.float32) * std


def _rebuild(model, plan: TransferPlan, new_size: int, random_rows, check_old: int) -> None:
    """Resize ``model``'s vocabulary to ``new_size`` and fill rows and bias per ``plan``."""
    import torch

    old_emb = model.get_input_embeddings().weight.detach().float().clone()
    out = model.get_output_embeddings()
    tied = out is not None and out.weight is model.get_input_embeddings().weight
    old_out = None if out is None or tied else out.weight.detach().float().clone()
    old_bias = None if out is None or getattr(out, "bias", None) is None else out.bias.detach().float().clone()
    if check_old > old_emb.shape[0]:
        raise TransferError(
            f"the model has {old_emb.shape[0]} embedding rows but its tokenizer {check_old} ids: "
            "they do not belong together"
        )
    dim = old_emb.shape[1]
    new_emb = torch.zeros((new_size, dim), dtype=torch.float32)
    new_out = None if old_out is None else torch.zeros((new_size, old_out.shape[1]), dtype=torch.float32)
    new_bias = None if old_bias is None else torch.zeros(new_size, dtype=torch.float32)
    r = 0
    for i, (kind, src) in enumerate(zip(plan.kinds, plan.sources)):
        if kind == "random":
            new_emb[i] = random_rows[r]
            if new_out is not None:
                new_out[i] = random_rows[r]
            r += 1
            continue
        idx = torch.tensor(src, dtype=torch.long)
        new_emb[i] = old_emb[idx].mean(0) if len(src) > 1 else old_emb[src[0]]
        if new_out is not None:
            new_out[i] = old_out[idx].mean(0) if len(src) > 1 else old_out[src[0]]
        if new_bias is not None:
            new_bias[i] = old_bias[idx].mean(0) if len(src) > 1 else old_bias[src[0]]
    model.resize_token_embeddings(new_size, mean_resizing=False)
    with torch.no_grad():
        emb = model.get_input_embeddings()
        emb.weight.copy_(new_emb.to(emb.weight.dtype))
        out = model.get_output_embeddings()
        if out is not None:
            if new_out is not None:
                out.weight.copy_(new_out.to(out.weight.dtype))
            if new_bias is not None and getattr(out, "bias", None) is not None:
                out.bias.copy_(new_bias.to(out.bias.dtype))
    if tied:
        model.tie_weights()


def _shift_positions(model, old_pad: int | None, new_pad: int) -> None:
    """RoBERTa-style embeddings number positions from pad+1: keep each position's row."""
    import torch

    base = getattr(model, model.base_model_prefix, model)
    emb = getattr(base, "embeddings", None)
    if emb is None or not hasattr(emb, "create_position_ids_from_input_ids") or old_pad is None:
        if emb is not None and hasattr(emb, "padding_idx"):
            emb.padding_idx = new_pad
        return
    emb.padding_idx = new_pad
    if old_pad == new_pad:
        return
    pos = emb.position_embeddings
    old = pos.weight.detach().clone()
    n, dim = old.shape
    real = n - (old_pad + 1)  # real positions the model knows
    size = new_pad + 1 + real
    new = torch.zeros((size, dim), dtype=old.dtype)
    new[new_pad + 1:] = old[old_pad + 1:]
    new[new_pad] = old[old_pad]
    keep = min(new_pad, old_pad)
    new[:keep] = old[:keep]
    if size != n:
        pos_new = torch.nn.Embedding(size, dim, padding_idx=new_pad, dtype=old.dtype)
        emb.position_embeddings = pos_new
        model.config.max_position_embeddings = size
        emb.register_buffer("position_ids", torch.arange(size).expand((1, -1)), persistent=False)
        if hasattr(emb, "token_type_ids"):
            emb.register_buffer("token_type_ids", torch.zeros((1, size), dtype=torch.long), persistent=False)
    with torch.no_grad():
        emb.position_embeddings.weight.copy_(new)
    emb.position_embeddings.padding_idx = new_pad


def _set_config_ids(model, new: BiotokTokenizer) -> None:
    cfg = model.config
    cfg.pad_token_id = new.pad_id
    bos = new.special_id("bos") if new.special_id("bos") is not None else new.cls_id
    eos = new.special_id("eos") if new.special_id("eos") is not None else new.sep_id
    cfg.bos_token_id = bos
    cfg.eos_token_id = eos


def check_specials(tok: BiotokTokenizer, what: str) -> None:
    """Raise ConfigError when ``tok`` lacks a special token a masked LM needs."""
    missing = [r for r in ("pad", "cls", "sep", "mask") if tok.special_id(r) is None]
    if missing:
        raise ConfigError(
            f"{what} tokenizer {tok.name} has no {'/'.join(missing)} token: a masked-LM needs "
            "[CLS]/<s>, [SEP]/</s>, [MASK]/<mask> and [PAD]/<pad>"
        )


def _load_tokenizer(spec, what: str, *, model_dir: bool = False) -> BiotokTokenizer:
    """A tokenizer biotok loads (a model directory: also what ``AutoTokenizer`` loads)."""
    from biotok.formats import load
    from biotok_train.hf_models import load_model_tokenizer

    if isinstance(spec, BiotokTokenizer):
        return spec
    try:
        return load_model_tokenizer(spec) if model_dir else load(spec)
    except BiotokError as e:
        raise type(e)(f"{what} tokenizer: {e}") from None


def transfer(
    model_dir: str | os.PathLike[str],
    new_tokenizer: str | os.PathLike[str] | BiotokTokenizer,
    config: TransferConfig = TransferConfig(),
) -> TransferResult:
    """Load the masked-LM in ``model_dir`` and its tokenizer; return it with ``new_tokenizer``'s vocabulary."""
    model_dir = Path(model_dir)
    cfg = _read_config(model_dir)
    cls, electra_pair = _model_class(model_dir, cfg)
    old = _load_tokenizer(model_dir, f"MODEL ({model_dir})", model_dir=True)
    new = _load_tokenizer(new_tokenizer, "NEW")
    check_specials(new, "NEW")
    plan = plan_transfer(old, new, config.method)

    model = _load_model(cls, model_dir)
    generator = None
    if electra_pair:
        gen_cfg = _read_config(model_dir / "generator")
        gen_cls, _ = _model_class(model_dir / "generator", gen_cfg, generator=True)
        generator = _load_model(gen_cls, model_dir / "generator")
    n_random = plan.count("random")
    first = None
    for m in (model, generator):
        if m is None:
            continue
        dim = m.get_input_embeddings().weight.shape[1]
        std = float(getattr(m.config, "initializer_range", 0.02))
        if first is None or first[0] != dim or first[1] != std:
            first = (dim, std, _random_rows(n_random, dim, std, config.seed))
        _rebuild(m, plan, new.vocab_size, first[2], old.vocab_size)
        _shift_positions(m, m.config.pad_token_id, new.pad_id)  # config still holds the old ids
        _set_config_ids(m, new)
    counts = plan.counts
    log.info("transfer %s -> %s (%s): %s", old.name, new.name, config.method, counts)
    provenance = {
        "format": FORMAT,
        "method": config.method,
        "seed": config.seed,
        "counts": counts,
        "vocab_size": {"old": old.vocab_size, "new": new.vocab_size},
        "model": {
            "path": str(model_dir),
            "model_type": cfg.get("model_type"),
            "architecture": type(model).__name__,
            "generator": type(generator).__name__ if generator is not None else None,
            "weights_sha256": {
                str(p.relative_to(model_dir)): _sha256(p)
                for d in ([model_dir] + ([model_dir / "generator"] if generator is not None else []))
                for p in _weight_files(d)
            },
        },
        "old_tokenizer": {"name": old.name, "source": old.source, "fingerprint": old.fingerprint, "marker": old.marker},
        "new_tokenizer": {"name": new.name, "source": new.source, "fingerprint": new.fingerprint, "marker": new.marker},
        "versions": _versions(),
    }
    return TransferResult(model=model, generator=generator, tokenizer=new, old_tokenizer=old,
                          config=config, plan=plan, provenance=provenance)


def _versions() -> dict[str, str]:
    import tokenizers
    import torch
    import transformers

    from biotok import __version__

    return {"biotok": __version__, "torch": torch.__version__, "transformers": transformers.__version__,
            "tokenizers": tokenizers.__version__, "python": platform.python_version()}


# --- writing ---------------------------------------------------------------------------------------
def hf_tokenizer(tok: BiotokTokenizer, *, type_vocab_size: int = 2, model_max_length: int = 512):
    """``tok`` as a ``PreTrainedTokenizerFast`` framing ``cls A sep`` / pairs as its family does."""
    from tokenizers import Tokenizer
    from tokenizers.processors import TemplateProcessing
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer.from_str(tok.backend.to_str())
    cls, sep = tok.specials["cls"], tok.specials["sep"]
    b_type = 1 if type_vocab_size >= 2 else 0
    pair = (f"{cls} $A {sep} $B:{b_type} {sep}:{b_type}" if tok.family == "bert"
            else f"{cls} $A {sep} {sep} $B {sep}")
    backend.post_processor = TemplateProcessing(
        single=f"{cls} $A {sep}", pair=pair,
        special_tokens=[(cls, tok.token_to_id(cls)), (sep, tok.token_to_id(sep))],
    )
    backend.no_truncation()
    backend.no_padding()
    names = ["input_ids", "token_type_ids", "attention_mask"] if type_vocab_size >= 2 else ["input_ids", "attention_mask"]
    kwargs = {f"{r}_token": t for r, t in tok.specials.items()}
    return PreTrainedTokenizerFast(tokenizer_object=backend, model_max_length=model_max_length,
                                   model_input_names=names, **kwargs)


def _max_length(model) -> int:
    cfg = model.config
    n = int(getattr(cfg, "max_position_embeddings", 512))
    base = getattr(model, model.base_model_prefix, model)
    emb = getattr(base, "embeddings", None)
    if emb is not None and hasattr(emb, "create_position_ids_from_input_ids") and cfg.pad_token_id is not None:
        n -= int(cfg.pad_token_id) + 1
    return n


def _inputs(result: TransferResult) -> list[str]:
    return [p for p in (result.provenance.get("model", {}).get("path"), result.tokenizer.source,
                        result.old_tokenizer.source) if p and Path(p).exists()]


def write_transfer(result: TransferResult, out: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Save the transferred model (safetensors), its tokenizer and ``transfer.json`` atomically.

    ``force`` replaces an earlier transfer output (a folder holding transfer.json), never an input.
    """
    from biotok_train.hf_models import quiet_transformers

    out = Path(out)
    with quiet_transformers(), atomic_directory(out, force=force, inputs=_inputs(result), marker=MARKER) as tmp:
        result.model.save_pretrained(str(tmp))
        if result.generator is not None:
            result.generator.save_pretrained(str(tmp / "generator"))
        fast = hf_tokenizer(result.tokenizer,
                            type_vocab_size=int(getattr(result.model.config, "type_vocab_size", 2)),
                            model_max_length=_max_length(result.model))
        fast.save_pretrained(str(tmp))
        (tmp / MARKER).write_text(
            json.dumps(result.provenance, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return out


def transfer_to(
    model_dir: str | os.PathLike[str],
    new_tokenizer: str | os.PathLike[str] | BiotokTokenizer,
    out: str | os.PathLike[str],
    config: TransferConfig = TransferConfig(),
    *,
    force: bool = False,
) -> TransferResult:
    """``transfer`` then ``write_transfer``; refuses an existing ``out`` before any work."""
    inputs = [str(model_dir)] + ([str(new_tokenizer)] if not isinstance(new_tokenizer, BiotokTokenizer) else [])
    check_writable(out, force, [p for p in inputs if Path(p).exists()], MARKER)
    result = transfer(model_dir, new_tokenizer, config)
    write_transfer(result, out, force=force)
    return result


__all__ = ["METHODS", "SUPPORTED", "TransferConfig", "TransferError", "TransferPlan", "TransferResult",
           "plan_transfer", "segment_as_old", "transfer", "transfer_to", "write_transfer", "hf_tokenizer"]


from biotok_train._verbs import make_verb  # noqa: E402

make_verb(__name__, "biotok_train.transfer:transfer_to")  # biotok_train.transfer(...) calls it
