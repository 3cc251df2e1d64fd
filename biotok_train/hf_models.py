"""Loading and saving Hugging Face models and tokenizers: the one place fine-tuning, evaluation,
fill-mask and pretraining checkpoints go through.

A model directory holds ``config.json`` + weights and a tokenizer (``tokenizer.json`` or any
format biotok reads). transformers is imported inside the functions, so importing this module
stays cheap.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from pathlib import Path

from biotok.errors import BiotokError, TokenizerLoadError
from biotok.io import not_found
from biotok.tokenizer import BiotokTokenizer

log = logging.getLogger(__name__)


def _first_line(e: BaseException) -> str:
    """The whole message of ``e`` on one line (transformers' messages run over several)."""
    text = " ".join(part.strip() for part in str(e).splitlines() if part.strip())
    return (text[:400] + "...") if len(text) > 400 else (text or type(e).__name__)


_TOKENIZER_FILES = ("tokenizer.json", "tokenizer.json.gz", "vocab.txt", "vocab.json", "merges.txt")


def _has_tokenizer_file(d: Path) -> bool:
    return any((d / f).is_file() for f in _TOKENIZER_FILES) or any(d.glob("*.model"))


def encoder_dir(model: str | os.PathLike[str]) -> Path:
    """The folder holding the transformer's config.json of a model directory: the directory
    itself, or, in the sentence-transformers layout (``modules.json``), the folder its
    ``Transformer`` module names (the root when the path is empty). Anything else is returned
    as given (a hub id, a missing path: the caller reports it)."""
    from biotok.formats.hf import transformer_folder  # lazy: the one reader of modules.json

    d = Path(model)
    if (d / "config.json").is_file() or not (d / "modules.json").is_file():
        return d
    try:
        sub = transformer_folder(d)
    except TokenizerLoadError as e:
        raise BiotokError(str(e)) from None
    if sub is not None and (sub / "config.json").is_file():
        return sub
    raise BiotokError(f"{d}: modules.json names no Transformer module folder with a config.json")


# config.json numbers every architecture reads, with the range a model may have: a negative
# vocab_size, or a hidden size that asks for terabytes, is refused before transformers sees it
_CONFIG_SIZES = {"vocab_size": (1, 1 << 24), "hidden_size": (1, 1 << 16), "num_hidden_layers": (1, 1024),
                 "num_attention_heads": (1, 1024), "intermediate_size": (1, 1 << 20),
                 "max_position_embeddings": (1, 1 << 20), "embedding_size": (1, 1 << 16), "type_vocab_size": (0, 1024)}


def model_config(model_dir: str | os.PathLike[str]) -> dict:
    """The config.json of a model directory (its transformer folder for sentence-transformers),
    checked: a whole JSON object, ``architectures`` a list of class names, ``model_type`` a name,
    the sizes positive integers in range. Every failure is one :class:`BiotokError` naming the file:
    the one model check of every command that loads a model."""
    from biotok.io import read_json  # lazy: biotok.io is light, but keep this module's imports minimal

    d = encoder_dir(model_dir)
    f = d / "config.json"
    if not f.is_file():
        raise BiotokError(f"{d} is not a Hugging Face model directory (no config.json)")
    cfg = read_json(f, advice="copy or save the model again")
    archs = cfg.get("architectures")
    if archs is not None and (not isinstance(archs, list) or not all(isinstance(a, str) for a in archs)):
        raise BiotokError(f"{f}: \"architectures\" must be a list of class names, not {json.dumps(archs)[:80]}")
    if "model_type" in cfg and not isinstance(cfg["model_type"], str):
        raise BiotokError(f"{f}: \"model_type\" must be a name, not {json.dumps(cfg['model_type'])[:80]}")
    for key, (lo, hi) in _CONFIG_SIZES.items():
        v = cfg.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi):
            raise BiotokError(f"{f}: \"{key}\" is {json.dumps(v)[:40]}; it must be an integer between {lo:,} and "
                              f"{hi:,}: the file is damaged, copy or save the model again")
    return cfg


def check_model(model, tok: BiotokTokenizer | int, where: object) -> None:
    """Refuse a model whose input embedding has fewer rows than the tokenizer (or prepared data,
    given as its vocabulary size) has ids: every id beyond would be an IndexError mid-run."""
    n = tok if isinstance(tok, int) else tok.vocab_size
    rows = model.get_input_embeddings().num_embeddings
    if n > rows:
        raise BiotokError(f"{where}: the tokenizer has {n:,} ids but the model's embedding only {rows:,} rows: they "
                          "do not belong together (transfer the model to this tokenizer: biotok-train transfer)")


def is_bare_encoder(config: dict) -> bool:
    """Whether a config.json describes an encoder without any head (``BertModel``,
    ``RobertaModel``, ...): its first architecture is a ``...Model`` class."""
    archs = config.get("architectures") or []
    first = archs[0] if isinstance(archs, list) and archs else None
    return isinstance(first, str) and first.endswith("Model") and "For" not in first and "Head" not in first


def load_masked_lm(model_dir: str | os.PathLike[str], auto_class: str = "AutoModelForMaskedLM", *, seed: int = 0):
    """``auto_class`` with the weights of ``model_dir``; a bare encoder gets a new masked-LM head.

    The head is built by transformers (``from_config``: decoder tied to the input embeddings,
    transform and bias initialised as the architecture does, from a generator seeded with
    ``seed`` so reruns are identical) and the encoder's weights are loaded into ``base_model``;
    one log line says so. A checkpoint with an MLM head loads as saved; one whose head is not
    in its weights (a model fine-tuned for NER or classification) is refused: transformers would
    give it a random head, and answers that change from run to run.
    """
    import torch
    import transformers

    d = encoder_dir(model_dir)
    cfg = model_config(d)
    if not is_bare_encoder(cfg):
        model, info = load_model(d, auto_class, "a masked LM from", output_loading_info=True)
        prefix = getattr(model, "base_model_prefix", "")
        head = [k for k in info.get("missing_keys", ()) if not (prefix and k.startswith(f"{prefix}."))]
        if head and auto_class == "AutoModelForMaskedLM":  # (AlbertForPreTraining may add its SOP head)
            arch = (cfg.get("architectures") or ["this model"])[0]
            raise BiotokError(f"{d} has no masked-LM head ({arch}: {sorted(head)[0]} is not in its weights): a "
                              "fine-tuned model cannot fill masks; give a pretrained masked LM or its bare encoder")
        return model
    encoder = load_model(d, "AutoModel", "an encoder from")
    with quiet_transformers(), torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        factory = getattr(transformers, auto_class)
        model = factory.from_config(encoder.config) if auto_class.startswith("Auto") else factory(encoder.config)
    missing, _ = model.base_model.load_state_dict(encoder.state_dict(), strict=False)
    if missing:
        raise BiotokError(f"cannot load the encoder {d} into {type(model).__name__}: missing {', '.join(missing[:5])}")
    model.tie_weights()
    log.info("%s is a bare encoder (%s): created its masked-LM head (%s, decoder tied to the input embeddings)",
             model_dir, cfg["architectures"][0], type(model).__name__)
    return model


def load_model_tokenizer(model: str | os.PathLike[str]) -> BiotokTokenizer:
    """The tokenizer of a model directory: biotok's loader first, then ``AutoTokenizer``.

    Truncation and padding saved in tokenizer.json are switched off: callers cut and pad. A
    sentence-transformers directory gives the tokenizer of its transformer folder.
    """
    if Path(model).is_dir():
        model = encoder_dir(model)
    tok = _load_tokenizer(model)
    tok.backend.no_truncation()
    tok.backend.no_padding()
    return tok


def _load_tokenizer(model: str | os.PathLike[str]) -> BiotokTokenizer:
    """biotok's loader, else a fast ``AutoTokenizer``; when both fail the error names both causes."""
    from biotok.formats import load  # lazy: the tokenizer formats only when a tokenizer is loaded

    m = str(model)
    if not Path(m).exists() and (m.startswith((".", "/", "~")) or m.count("/") > 1 or os.path.islink(m)):
        # a path, not a hub id (a symlink loop or a link to nothing is said as such)
        raise TokenizerLoadError(f"{not_found('model', m)} (a directory with config.json and a tokenizer)")
    if Path(m).is_dir() and not _has_tokenizer_file(Path(m)):
        # transformers would build an empty tokenizer from config.json alone, or fail obscurely
        raise TokenizerLoadError(
            f"{m} holds no tokenizer: expected tokenizer.json, vocab.txt, a SentencePiece .model or "
            "vocab.json + merges.txt beside the model; save the model's tokenizer there"
        )
    from biotok.formats.hf import check_ids  # lazy: with load, only when a tokenizer is loaded

    try:
        return load(model)
    except TokenizerLoadError as e:
        biotok_error = e
        log.debug("biotok cannot load %s (%s); trying transformers' AutoTokenizer", m, e)
    try:
        from transformers import AutoTokenizer

        hf = AutoTokenizer.from_pretrained(m, **hub_kwargs(m))
    except Exception as e:  # transformers raises OSError/ValueError/... for unknown models
        raise TokenizerLoadError(
            f"cannot load a tokenizer from {m}: {_first_line(e)} (biotok: {_first_line(biotok_error)})"
        ) from e
    if not getattr(hf, "is_fast", False):
        raise TokenizerLoadError(f"{m}: a fast tokenizer (tokenizer.json) is needed for word ids")
    specials = {r: getattr(hf, f"{r}_token", None) for r in ("pad", "unk", "cls", "sep", "mask", "bos", "eos")}
    return check_ids(BiotokTokenizer(hf.backend_tokenizer, name=Path(m).name, source=m, specials=specials), m)


def hub_kwargs(model: str | os.PathLike[str]) -> dict:
    """``from_pretrained`` arguments for ``model``: none for a local folder; for a Hub id while
    the Hub cannot be reached, ``local_files_only`` (its cached copy, else one error at once,
    instead of five retries over half a minute, each a warning line on stderr)."""
    if Path(model).exists():
        return {}
    from biotok.formats.hub import hub_reachable
    from biotok.hubclient import with_deadline  # lazy: as above

    if not hub_reachable():
        return {"local_files_only": True}
    with_deadline()  # every Hub call of the download bounded (BIOTOK_HUB_TIMEOUT), not left to wait forever
    return {}


@contextlib.contextmanager
def quiet_transformers():
    """Silence transformers' loading bars and "newly initialized weights" notes (expected here)."""
    from transformers.utils import logging as hf_logging

    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


def frame_ids(tok: BiotokTokenizer) -> tuple[int, int, int]:
    """(start, end, pad) ids that frame a sequence: [CLS] ... [SEP] or <s> ... </s>."""
    start = tok.cls_id if tok.cls_id is not None else tok.special_id("bos")
    end = tok.sep_id if tok.sep_id is not None else tok.special_id("eos")
    if start is None or end is None:
        raise TokenizerLoadError(f"{tok.name}: no [CLS]/[SEP] (or <s>/</s>) special tokens")
    pad = tok.pad_id if tok.pad_id is not None else end
    return start, end, pad


def best_device():
    """cuda when available, else cpu."""
    import torch

    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def load_model(model_path: str | os.PathLike[str], auto_class: str, what: str = "model", **kwargs):
    """``transformers.<auto_class>.from_pretrained(model_path, **kwargs)``, quietly; a missing or
    unreadable model becomes one :class:`~biotok.errors.BiotokError` line (cause chained)."""
    import transformers

    cls = getattr(transformers, auto_class)
    if Path(model_path).is_dir():
        model_path = encoder_dir(model_path)
        model_config(model_path)  # damaged or impossible config.json: one line before transformers reads it
    try:
        with quiet_transformers():
            return cls.from_pretrained(str(model_path), **hub_kwargs(model_path), **kwargs)
    except (OSError, ValueError) as e:
        if "Unrecognized configuration class" in str(e):  # a decoder (GPT-2...) where an encoder is needed
            raise BiotokError(f"cannot load {what} {model_path}: transformers has no {auto_class} for a "
                              f"{_model_type(Path(model_path))} model (an encoder such as BERT or RoBERTa is "
                              "needed)") from e
        raise BiotokError(f"cannot load {what} {model_path}: {_first_line(e)}") from e
    except RuntimeError as e:  # weights of another shape than config.json (and the arguments) give
        if "mismatched" not in str(e):
            raise
        raise BiotokError(f"cannot load {what} {model_path} as {auto_class}: "
                          f"{_disagreement(cls, Path(model_path), kwargs)}") from e
    except Exception as e:  # safetensors' SafetensorError: a truncated or damaged weights file
        if type(e).__name__ != "SafetensorError":
            raise
        weights = ", ".join(str(p) for p in sorted(Path(model_path).glob("*.safetensors"))) or str(model_path)
        raise BiotokError(
            f"cannot load {what} {model_path}: {weights} is damaged ({_first_line(e)}); "
            "copy or save the model again"
        ) from e


def _model_type(model_path: Path) -> str:
    try:
        return str(json.loads((model_path / "config.json").read_text(encoding="utf-8"))["model_type"])
    except (OSError, ValueError, KeyError, TypeError):
        return "this"


def _weight_shapes(model_path: Path) -> dict[str, tuple[tuple[int, ...], str]]:
    """Name -> (shape, file) of every tensor in the safetensors files of ``model_path`` (headers only)."""
    from safetensors import safe_open

    shapes: dict[str, tuple[tuple[int, ...], str]] = {}
    for f in sorted(model_path.glob("*.safetensors")):
        with safe_open(str(f), "pt") as st:
            for k in st.keys():
                shapes[k] = (tuple(st.get_slice(k).get_shape()), f.name)
    return shapes


def _mismatches(cls, model_path: Path, kwargs: dict) -> list[tuple[bool, str, tuple, tuple, str]] | None:
    """(in the head, name, saved shape, shape by config.json, file) of every saved tensor whose
    shape is not the one config.json (and ``kwargs``) give, the encoder's first; None when it
    cannot be told (no safetensors file, a config transformers does not read).

    The model is built from config.json on the meta device (no memory) and its tensor shapes
    compared with the safetensors headers."""
    import torch
    import transformers

    try:
        saved = _weight_shapes(model_path)
        if not saved:
            return None
        config = transformers.AutoConfig.from_pretrained(str(model_path), **kwargs)
        with quiet_transformers(), torch.device("meta"):
            model = cls.from_config(config) if hasattr(cls, "from_config") else cls(config)
        expected = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    except Exception:  # noqa: BLE001 - an explanation only: the caller has its own sentence then
        return None
    prefix = f"{getattr(model, 'base_model_prefix', '')}."
    wrong = []
    for name, (shape, file) in saved.items():
        key = next((k for k in (name, prefix + name, name.removeprefix(prefix)) if k in expected), None)
        if key is not None and expected[key] != shape:
            wrong.append((not key.startswith(prefix), key, shape, expected[key], file))
    return sorted(wrong, key=lambda w: w[0])  # the encoder's tensors first: they say what config.json got wrong


def _disagreement(cls, model_path: Path, kwargs: dict) -> str:
    """What transformers' "look at the above report" is about, in one sentence: the first weight
    whose saved shape is not the one config.json gives; a head alone of another size is a model
    fine-tuned on other labels."""
    wrong = _mismatches(cls, model_path, kwargs)
    if not wrong:
        return "its weights do not have the shapes its config.json gives (tensor sizes differ)"
    in_head, key, shape, want, file = wrong[0]
    dims = lambda t: "[" + ", ".join(map(str, t)) + "]"  # noqa: E731
    if in_head:  # sorted encoder first: every mismatch is in the head
        return (f"its head has another size ({key} is {dims(shape)} in {file}, {dims(want)} here: a model "
                "fine-tuned on other labels?); start from the pretrained model")
    return (f"config.json and {file} disagree: {key} is {dims(shape)} in {file} but {dims(want)} by config.json"
            f"{f' ({len(wrong)} tensors differ)' if len(wrong) > 1 else ''}; the weights are not the model "
            "config.json describes: fix config.json or copy the matching weights")


def check_weights(model_path: str | os.PathLike[str], auto_class: str = "AutoModelForMaskedLM",
                  what: str = "a masked LM from") -> None:
    """Refuse, before any work, a model whose saved tensors do not have the shapes its config.json
    gives (what :func:`load_model` would refuse after the work before it): reads the safetensors
    headers only and builds the model on the meta device."""
    import transformers

    d = encoder_dir(model_path)
    cls = getattr(transformers, auto_class)
    if _mismatches(cls, d, {}):
        raise BiotokError(f"cannot load {what} {d} as {auto_class}: {_disagreement(cls, d, {})}")


def load_mlm(model_path: str | os.PathLike[str]):
    """``AutoModelForMaskedLM`` on the best device, in eval mode, with its tokenizer (checked
    against the model: :func:`check_model`)."""
    tok = load_model_tokenizer(model_path)
    model = load_masked_lm(model_path)
    check_model(model, tok, model_path)
    model.to(best_device()).eval()
    return model, tok


_SPECIAL_KEYS = ("pad_token", "unk_token", "cls_token", "sep_token", "mask_token", "bos_token", "eos_token")


def fast_tokenizer(tok, specials: dict[str, str] | None = None, *, type_vocab_size: int = 2,
                   model_max_length: int = 512):
    """``tok`` (a BiotokTokenizer or a ``tokenizers.Tokenizer``) as a ``PreTrainedTokenizerFast``
    that ``AutoTokenizer`` reloads: the one builder of pretraining runs and transfer outputs.

    Sequences are framed ``cls A sep``; pairs as the model reads them: ``cls A sep B sep`` with
    segment B of type 1 for a model with two token types (BERT, ALBERT, ELECTRA), else
    ``cls A sep sep B sep`` all of type 0 and no token_type_ids (RoBERTa/CamemBERT).
    ``specials``: ``{"cls_token": "[CLS]", ...}`` (default: the BiotokTokenizer's roles). The
    caller's tokenizer is not changed (its post-processor, truncation and padding are set on a copy).
    """
    from tokenizers import Tokenizer
    from tokenizers.processors import TemplateProcessing
    from transformers import PreTrainedTokenizerFast

    if specials is None:
        specials = {f"{r}_token": t for r, t in tok.specials.items()}
    backend = Tokenizer.from_str((tok.backend if isinstance(tok, BiotokTokenizer) else tok).to_str())
    cls, sep = specials.get("cls_token"), specials.get("sep_token")
    if cls and sep:
        backend.post_processor = TemplateProcessing(
            single=f"{cls} $A {sep}",
            pair=f"{cls} $A {sep} $B:1 {sep}:1" if type_vocab_size >= 2 else f"{cls} $A {sep} {sep} $B {sep}",
            special_tokens=[(cls, backend.token_to_id(cls)), (sep, backend.token_to_id(sep))],
        )
    backend.no_truncation()
    backend.no_padding()
    kwargs = {k: v for k, v in specials.items() if k in _SPECIAL_KEYS}
    names = ["input_ids", "token_type_ids", "attention_mask"] if type_vocab_size >= 2 else ["input_ids", "attention_mask"]
    return PreTrainedTokenizerFast(tokenizer_object=backend, model_max_length=model_max_length,
                                   model_input_names=names, **kwargs)


def save_hf_tokenizer(data_tokenizer_dir: Path, out: Path, *, seq_len: int, type_vocab_size: int = 2) -> None:
    """Save the tokenizer of prepared data (tokenizer.json + special_tokens_map.json) into ``out``
    as :func:`fast_tokenizer` builds it."""
    from tokenizers import Tokenizer

    backend = Tokenizer.from_file(str(data_tokenizer_dir / "tokenizer.json"))
    smap = json.loads((data_tokenizer_dir / "special_tokens_map.json").read_text(encoding="utf-8"))
    fast_tokenizer(backend, smap, type_vocab_size=type_vocab_size, model_max_length=seq_len).save_pretrained(str(out))


def save_pretrained(model, out: Path) -> None:
    """``model.save_pretrained(out)`` (safetensors) without transformers' progress bars; the files
    get the user's umask (safetensors writes them private, 0600)."""
    from biotok.output import apply_umask

    with quiet_transformers():
        model.save_pretrained(str(out))
    apply_umask(out)
