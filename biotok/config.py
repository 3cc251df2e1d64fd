"""Frozen configuration dataclasses of biotok, each command's options once: the whole recipe of a
tokenizer (NormalizeConfig, TrainConfig, saved in biotok.json), a vocabulary-size sweep
(SweepConfig) and a pretraining-cost estimate (CostConfig). The companion's configs are in
:mod:`biotok_train.config`."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

from biotok.errors import ConfigError

# --- numbers at the door: every numeric option of every config has a range -------------------------
INT32_MAX = 2**31 - 1  # SentencePiece parses its integer options as int32
INT64_MAX = 2**63 - 1  # numpy, torch and the Rust tokenizers take no larger integer
SEED_MAX = 2**32 - 1  # numpy.random, torch.manual_seed and random.seed all accept 0 .. 2**32 - 1
# No tokenizer has 16 M pieces; the trainers allocate per piece asked for, and abort the process
# (Rust's allocation error, SentencePiece's int32) long before they can say the corpus is too small.
MAX_VOCAB_SIZE = 2**24


def option_name(name: str) -> str:
    """The command-line spelling of config field ``name``: ``vocab_size`` -> ``--vocab-size``."""
    return name if name.startswith("-") else "--" + name.replace("_", "-")


def check_range(name: str, value: Any, lo: float | None = None, hi: float | None = None, *,
                above: bool = False) -> None:
    """:class:`ConfigError` naming the option and the value unless ``value`` is a finite number
    in ``[lo, hi]`` (``above``: strictly greater than ``lo``); ``None`` bounds are open."""
    opt = option_name(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{opt} must be a number, not {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{opt} must be a finite number, not {value}")
    low_ok = lo is None or (value > lo if above else value >= lo)
    if low_ok and (hi is None or value <= hi):
        return
    if lo is not None and hi is not None and not above:
        raise ConfigError(f"{opt} {value} is out of range: it must be between {lo} and {hi}")
    if not low_ok:
        raise ConfigError(f"{opt} {value} is out of range: it must be {'>' if above else '>='} {lo}")
    raise ConfigError(f"{opt} {value} is out of range: it must be at most {hi}")


def check_numbers(config: Any, ranges: dict[str, tuple] | None = None, names: dict[str, str] | None = None) -> None:
    """Every number of dataclass ``config`` (a tuple's items too) is finite and within its range:
    ``ranges[name] = (lo, hi)``, else any integer of 64 bits and any finite float. Called at the
    end of each config's ``__post_init__``, so no option reaches a library that would crash on it.
    ``names``: the option a field is spelled as where its name differs (a group's ``seeds``: --pretrain-seeds)."""
    ranges, names = ranges or {}, names or {}
    for f in fields(config):
        value = getattr(config, f.name)
        for x in value if isinstance(value, tuple) else (value,):
            if isinstance(x, bool) or not isinstance(x, (int, float)):
                continue
            # without a range of its own: an integer must fit 64 bits, a float need only be finite
            lo, hi = ranges.get(f.name, (-INT64_MAX, INT64_MAX) if isinstance(x, int) else (None, None))
            check_range(names.get(f.name, f.name), x, lo, hi)

UnicodeForm = Literal["NFKC", "NFC", "none"]
# Measurement defaults shared by biotok.metrics / biotok.report and the compare/report commands.
BATCH_SIZE = 2000  # lines per encode_batch call
EXAMPLES = 8  # example pieces shown per vocabulary set
ALGOS = ("unigram", "bpe", "wordpiece")
# The libraries that train each algorithm, the default first: the one that measured best on
# French biomedical text (docs/training.md, "Which backend?"); WordPiece exists only in tokenizers.
BACKENDS_OF: dict[str, tuple[str, ...]] = {
    "unigram": ("sentencepiece", "tokenizers"),
    "bpe": ("tokenizers", "sentencepiece"),
    "wordpiece": ("tokenizers",),
}
BACKEND_NAMES = ("sentencepiece", "tokenizers")
# Earlier names that mixed the algorithm with the library; still accepted everywhere.
ALGO_ALIASES: dict[str, tuple[str, str]] = {
    "spm-unigram": ("unigram", "sentencepiece"),
    "spm-bpe": ("bpe", "sentencepiece"),
}


@dataclass(frozen=True)
class NormalizeConfig:
    """Switches of the French biomedical normalization (see docs/normalization.md)."""

    unicode: UnicodeForm = "NFKC"
    strip_control: bool = True
    fold_typography: bool = True
    space_punctuation: bool = True
    lowercase: bool = False
    strip_accents: bool = False
    whitespace: bool = True  # every Unicode whitespace separates words (kept by raw(): training reads lines)

    def __post_init__(self) -> None:
        if self.unicode not in ("NFKC", "NFC", "none"):
            raise ConfigError(f"unicode must be NFKC, NFC or none, not {self.unicode!r}")

    @classmethod
    def raw(cls, lowercase: bool = False) -> "NormalizeConfig":
        """No biotok normalization at all (the AliBERT paper's *_N_N variants), optional lowercase."""
        return cls(
            unicode="none",
            strip_control=False,
            fold_typography=False,
            space_punctuation=False,
            lowercase=lowercase,
            strip_accents=False,
        )

    @classmethod
    def from_switches(
        cls, *, lowercase: bool = False, normalize: bool = True, unicode: UnicodeForm = "NFKC",
        strip_accents: bool = False,
    ) -> "NormalizeConfig":
        """The config the command-line switches describe (``normalize=False``: raw text, lowercase kept)."""
        if not normalize:
            return cls.raw(lowercase=lowercase)
        return cls(unicode=unicode, lowercase=lowercase, strip_accents=strip_accents)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "NormalizeConfig":
        known = {f.name for f in fields(cls)}
        d = {"whitespace": False, **d}  # recorded before the switch existed: it was not applied
        return cls(**{k: v for k, v in d.items() if k in known})


@dataclass(frozen=True)
class SpecialTokens:
    """Special tokens of a model family, in id order (they take ids 0..n-1)."""

    family: str
    pad: str
    unk: str
    cls: str
    sep: str
    mask: str
    bos: str | None = None
    eos: str | None = None

    @property
    def ordered(self) -> list[str]:
        seen: list[str] = []
        order = (
            [self.bos, self.pad, self.eos, self.unk, self.mask]
            if self.family == "roberta"
            else [self.pad, self.unk, self.cls, self.sep, self.mask]
        )
        for t in order:
            if t is not None and t not in seen:
                seen.append(t)
        return seen


BERT_SPECIALS = SpecialTokens(
    family="bert", pad="[PAD]", unk="[UNK]", cls="[CLS]", sep="[SEP]", mask="[MASK]"
)
# CamemBERT / RoBERTa convention: <s>=0 <pad>=1 </s>=2 <unk>=3, <mask> right after.
ROBERTA_SPECIALS = SpecialTokens(
    family="roberta",
    pad="<pad>",
    unk="<unk>",
    cls="<s>",
    sep="</s>",
    mask="<mask>",
    bos="<s>",
    eos="</s>",
)


@dataclass(frozen=True)
class TrainConfig:
    """Everything that decides the trained vocabulary; same config + corpus + seed = same bytes.

    ``algo`` is the algorithm, ``backend`` the library that trains it (None: the algorithm's
    default, :data:`BACKENDS_OF`); the aliases ``spm-unigram`` and ``spm-bpe`` are resolved to
    both. ``seed_text_mb`` bounds SentencePiece Unigram's memory (word counts are scaled so that
    the text it builds its seed pieces from stays under that many MB; 0: exact counts).
    """

    algo: str = "unigram"
    backend: str | None = None
    vocab_size: int = 32000
    normalize: NormalizeConfig = field(default_factory=NormalizeConfig)
    seed: int = 0
    min_frequency: int = 2
    max_piece_length: int = 16
    character_coverage: float = 0.9999
    limit_alphabet: int = 1000
    field_name: str | None = None
    # Unigram on punctuation-spaced text: give every mark its '▁mark' piece (docs/training.md).
    punct_pieces: bool = True
    # SentencePiece: characters outside the vocabulary become UTF-8 byte pieces, never <unk>.
    byte_fallback: bool = False
    # SentencePiece Unigram: scale word counts so that its seed text fits in this many MB.
    seed_text_mb: int = 64

    def __post_init__(self) -> None:
        if self.algo in ALGO_ALIASES:
            algo, backend = ALGO_ALIASES[self.algo]
            if self.backend not in (None, backend):
                raise ConfigError(f"--algo {self.algo} means --backend {backend}, not {self.backend}")
            object.__setattr__(self, "algo", algo)
            object.__setattr__(self, "backend", backend)
        if self.algo not in ALGOS:
            names = ", ".join([*ALGOS, *ALGO_ALIASES])
            raise ConfigError(f"unknown algorithm {self.algo!r}; choose one of {names}")
        if self.backend is None:
            object.__setattr__(self, "backend", BACKENDS_OF[self.algo][0])
        if self.backend not in BACKENDS_OF[self.algo]:
            if self.backend not in BACKEND_NAMES:
                raise ConfigError(f"unknown backend {self.backend!r}; choose one of {', '.join(BACKEND_NAMES)}")
            raise ConfigError(f"{self.algo} is trained only by {' or '.join(BACKENDS_OF[self.algo])}, "
                              f"not {self.backend}")
        if self.byte_fallback and self.backend != "sentencepiece":
            raise ConfigError("--byte-fallback needs --backend sentencepiece (the tokenizers trainers "
                              "have no byte pieces)")
        if self.seed_text_mb < 0:
            raise ConfigError(f"seed text budget must be >= 0 MB, got {self.seed_text_mb}")
        if self.vocab_size < 1:
            raise ConfigError(f"vocab size must be positive, got {self.vocab_size}")
        if not 0.0 < self.character_coverage <= 1.0:
            raise ConfigError("character coverage must be in (0, 1]")
        for name in ("min_frequency", "max_piece_length", "limit_alphabet"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name.replace('_', ' ')} must be at least 1, got {getattr(self, name)}")
        check_numbers(self, {"vocab_size": (1, MAX_VOCAB_SIZE), "seed": (0, SEED_MAX),
                             "min_frequency": (1, INT32_MAX), "max_piece_length": (1, INT32_MAX),
                             "limit_alphabet": (1, INT32_MAX), "seed_text_mb": (0, INT32_MAX)})

    @property
    def specials(self) -> SpecialTokens:
        return BERT_SPECIALS if self.algo == "wordpiece" else ROBERTA_SPECIALS

    @property
    def default_backend(self) -> bool:
        """True when ``backend`` is the algorithm's default (the reproducible, better measured one)."""
        return self.backend == BACKENDS_OF[self.algo][0]

    @property
    def label(self) -> str:
        """The algorithm, with the backend when it is not the default: 'unigram', 'unigram-tokenizers'."""
        return self.algo if self.default_backend else f"{self.algo}-{self.backend}"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["normalize"] = self.normalize.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "TrainConfig":
        known = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in known}
        if "normalize" in kw and isinstance(kw["normalize"], dict):
            kw["normalize"] = NormalizeConfig.from_dict(kw["normalize"])
        if "backend" not in d and kw.get("algo") in ALGOS:
            kw["backend"] = "tokenizers"  # saved before backends existed: unigram/bpe/wordpiece were HF
        return cls(**kw)


# --- the sweep and cost commands (biotok.sweep, biotok.cost) --------------------------------------
DEFAULT_SIZES = (8000, 16000, 32000, 48000, 64000)  # vocabulary sizes a sweep tries


@dataclass(frozen=True)
class SweepConfig:
    """Options of a vocabulary-size sweep (:mod:`biotok.sweep`; the CLI reads its defaults from here)."""

    sizes: tuple[int, ...] = DEFAULT_SIZES
    hidden_size: int = 768  # for the embedding parameters (vocab x hidden)
    heldout_fraction: float = 0.1  # lines held out (by hash) to measure on, when no eval corpus is given
    max_eval_lines: int | None = 20000

    def __post_init__(self) -> None:
        sizes = tuple(sorted(set(int(s) for s in self.sizes)))
        if not sizes:
            raise ConfigError("give at least one vocabulary size")
        if sizes[0] < 100:
            raise ConfigError(f"vocabulary sizes must be >= 100, not {sizes[0]}")
        object.__setattr__(self, "sizes", sizes)
        if self.hidden_size < 1:
            raise ConfigError(f"hidden size must be >= 1, not {self.hidden_size}")
        if not 0 < self.heldout_fraction < 1:
            raise ConfigError(f"held-out fraction must be between 0 and 1, not {self.heldout_fraction}")
        if self.max_eval_lines is not None and self.max_eval_lines < 1:
            raise ConfigError(f"max eval lines must be >= 1, not {self.max_eval_lines}")
        check_numbers(self, {"sizes": (100, MAX_VOCAB_SIZE), "hidden_size": (1, INT32_MAX),
                             "max_eval_lines": (1, INT64_MAX)})


@dataclass(frozen=True)
class CostConfig:
    """Training budget assumptions of ``biotok cost`` (:mod:`biotok.cost`; the CLI reads its defaults from here)."""

    epochs: float = 1.0
    batch_size: int = 256  # sequences per optimizer step (all GPUs together)
    seq_len: int = 512
    tokens_per_second: float | None = None  # per GPU; None: from the measured table
    gpus: int = 1
    hidden_size: int = 768
    tied_embeddings: bool = True  # BERT/RoBERTa tie the MLM output layer to the input embedding
    sample_lines: int = 20000
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.epochs > 0:
            raise ConfigError(f"epochs must be > 0, not {self.epochs}")
        for name in ("batch_size", "seq_len", "gpus", "hidden_size", "sample_lines"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name.replace('_', ' ')} must be >= 1, not {getattr(self, name)}")
        if self.tokens_per_second is not None and not self.tokens_per_second > 0:
            raise ConfigError(f"tokens per second must be > 0, not {self.tokens_per_second}")
        check_numbers(self, {"seed": (0, SEED_MAX), **{n: (1, INT32_MAX) for n in (
            "batch_size", "seq_len", "gpus", "hidden_size", "sample_lines")}})


# measured by benchmarks/results/gpu/h200-2026-11-27/ablation.json: BERT-small, its arms' positions over the
# whole run's wall time (a lower bound); tests/test_decide.py recomputes it from that file
GPU_POSITIONS_PER_S = 49_144_878 / 152.9
# docs/results/plateau-fr: every BERT-tiny arm left the unigram plateau by step 14,000 of 8 x 128 positions
PLATEAU_POSITIONS = 14_336_000


@dataclass(frozen=True)
class DecideConfig:
    """What ``biotok decide`` (:mod:`biotok.decide`) accepts as evidence and how it costs the runs
    that would settle a question (the CLI reads its defaults from here)."""

    min_seeds: int = 2  # pretraining (ablate) or training (probe) seeds a kept interval needs
    fertility_tolerance: float = 0.01  # relative fertility gap under which two vocabularies are not told apart
    seeds_to_settle: int = 3  # pretraining seeds of a run that would settle it
    plateau_positions: int = PLATEAU_POSITIONS
    plateau_source: str = "docs/results/plateau-fr"
    plateau_batch: tuple[int, int] = (8, 128)  # the plateau recipe's sequences x pieces per step
    continued_positions: int = 1_024_000  # per arm, continued from a base (docs/results/transfer-cpu's budget)
    continued_batch: tuple[int, int] = (32, 128)  # its sequences x pieces per step
    min_measured_cpu_s: float = 60.0  # a user's ablation measures the CPU rate only past this much pretraining
    cpu_positions_per_s: float = 4763.0  # used only when biotok's measured table is missing
    gpu_positions_per_s: float = GPU_POSITIONS_PER_S
    gpu_positions_per_arm: int = 49_152_000  # docs/results/ablation-gpu-fr's BERT-small recipe
    gpu_source: str = "BERT-small on one NVIDIA H200, benchmarks/results/gpu/h200-2026-11-27"

    def __post_init__(self) -> None:
        if self.min_seeds < 1:
            raise ConfigError(f"--min-seeds must be >= 1, not {self.min_seeds}")
        if not 0 <= self.fertility_tolerance < 1:
            raise ConfigError(f"--fertility-tolerance must be in [0, 1), not {self.fertility_tolerance}")
        if self.seeds_to_settle < 1:
            raise ConfigError(f"seeds to settle must be >= 1, not {self.seeds_to_settle}")
        for name in ("plateau_positions", "continued_positions", "gpu_positions_per_arm"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name.replace('_', ' ')} must be >= 1, not {getattr(self, name)}")
        for name in ("cpu_positions_per_s", "gpu_positions_per_s"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"{name.replace('_', ' ')} must be > 0, not {getattr(self, name)}")
