"""A SentencePiece ``.model`` -> ``tokenizers.Tokenizer`` with identical segmentation.

Used to load any .model (Unigram or BPE) and to give biotok's spm-* trainers the same
tokenizer.json artifact as the HF trainers. For BPE, merges are derived from the vocabulary:
a piece is the merge of every split whose halves are pieces, ranked by the piece's id.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

from biotok.errors import TokenizerLoadError
from biotok.formats.hf import normalizer_lowercases, read_special_tokens
from biotok.tokenizer import BiotokTokenizer

# File names a SentencePiece model goes by in HF repositories and biotok artifacts.
SPM_NAMES = ("sentencepiece.bpe.model", "spm.model", "spiece.model", "tokenizer.model")

# sentencepiece_model.proto enums
UNIGRAM, BPE = 1, 2
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


def read_model_proto(model: str | os.PathLike[str] | bytes) -> Any:
    """Parse a SentencePiece model (path or serialized bytes) into its protobuf message."""
    # lazy: protobuf (sentencepiece_model_pb2) only when a .model file is read
    from sentencepiece import sentencepiece_model_pb2 as pb

    if isinstance(model, (str, os.PathLike)):
        try:
            data = Path(model).read_bytes()
        except FileNotFoundError as e:
            raise TokenizerLoadError(f"SentencePiece model not found: {model}") from e
        name = str(model)
    else:
        data, name = bytes(model), "<bytes>"
    proto = pb.ModelProto()
    try:
        proto.ParseFromString(data)
    except Exception as e:  # protobuf raises DecodeError, a bare Exception subclass
        raise TokenizerLoadError(f"{name} is not a SentencePiece model (protobuf parse failed)") from e
    if not proto.pieces:
        raise TokenizerLoadError(f"{name} is not a SentencePiece model (no pieces)")
    return proto


def derive_merges(vocab: dict[str, int], mergeable: set[str]) -> list[tuple[str, str]]:
    """BPE merges implied by an ordered vocabulary (the rank of a merge is its result's id)."""
    ranked = []
    for piece in mergeable:
        pid = vocab[piece]
        for i in range(1, len(piece)):
            left, right = piece[:i], piece[i:]
            if left in mergeable and right in mergeable:
                ranked.append((pid, vocab[left], vocab[right], left, right))
    ranked.sort()
    return [(left, right) for _, _, _, left, right in ranked]


def _spm_normalizer(proto: Any):
    spec = proto.normalizer_spec
    steps: list = []
    if spec.precompiled_charsmap:
        steps.append(normalizers.Precompiled(spec.precompiled_charsmap))
    if spec.remove_extra_whitespaces:
        steps.extend([normalizers.Strip(left=True, right=True), normalizers.Replace(Regex(" {2,}"), " ")])
    return normalizers.Sequence(steps) if steps else None


def spm_to_tokenizer(
    model: str | os.PathLike[str] | bytes,
    *,
    normalizer: Any = "spm",
) -> Tokenizer:
    """Build the ``tokenizers`` equivalent of a SentencePiece model.

    ``normalizer="spm"`` reproduces the model's own normalization (its precompiled charsmap);
    ``None`` adds none; any ``tokenizers`` normalizer object is used as given (biotok's spm-*
    trainers pass biotok's normalizer, having trained on text it had already normalized).
    """
    proto = read_model_proto(model)
    pieces = [(p.piece, p.score, p.type) for p in proto.pieces]
    vocab = {piece: i for i, (piece, _, _) in enumerate(pieces)}
    unk_id = next((i for i, (_, _, t) in enumerate(pieces) if t == UNKNOWN), 0)
    byte_fallback = bool(proto.trainer_spec.byte_fallback)
    model_type = proto.trainer_spec.model_type
    if model_type == UNIGRAM:
        tok_model = models.Unigram([(p, s) for p, s, _ in pieces], unk_id, byte_fallback)
    elif model_type == BPE:
        mergeable = {p for p, _, t in pieces if t in (NORMAL, USER_DEFINED)}
        tok_model = models.BPE(
            vocab,
            derive_merges(vocab, mergeable),
            unk_token=pieces[unk_id][0],
            fuse_unk=True,
            byte_fallback=byte_fallback,
        )
    else:
        raise TokenizerLoadError(
            f"SentencePiece model type {model_type} is not supported (only Unigram=1 and BPE=2)"
        )
    tok = Tokenizer(tok_model)
    tok.normalizer = _spm_normalizer(proto) if normalizer == "spm" else normalizer
    prepend = "always" if proto.normalizer_spec.add_dummy_prefix else "never"
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme=prepend, split=True)
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme=prepend, split=True)
    if byte_fallback:  # byte pieces <0xC3><0xAB> decode back to their UTF-8 text ('ë')
        tok.decoder = decoders.Sequence([decoders.ByteFallback(), tok.decoder])
    specials = [p for p, _, t in pieces if t in (CONTROL, UNKNOWN)]
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in specials])
    # user-defined pieces such as "▁," live in the model; only the others are matched as added
    # tokens (the text never contains "▁" before the pre-tokenizer runs)
    user = [p for p, _, t in pieces if t == USER_DEFINED and not p.startswith("▁")]
    if user:
        tok.add_tokens([AddedToken(u, normalized=False) for u in user])
    return tok


def load_spm(path: Path, *, name: str | None = None) -> BiotokTokenizer:
    """Load a SentencePiece model, its own normalization kept (see :func:`spm_to_tokenizer`)."""
    backend = spm_to_tokenizer(path, normalizer="spm")
    return BiotokTokenizer(
        backend, name=name or path.parent.name, source=str(path), specials=read_special_tokens(path.parent),
        marker="▁", lowercase=normalizer_lowercases(backend),
    )
