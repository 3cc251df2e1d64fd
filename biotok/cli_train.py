"""``biotok train`` and ``biotok count``: thin wrappers over :mod:`biotok.train` and the corpus."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import click

from biotok.config import ALGOS, NormalizeConfig, TrainConfig
from biotok.errors import BiotokError, OutputExistsError


def _normalize_config(lower: bool, normalize: bool, unicode: str, strip_accents: bool) -> NormalizeConfig:
    if not normalize:
        return NormalizeConfig.raw(lowercase=lower)
    return NormalizeConfig(unicode=unicode, lowercase=lower, strip_accents=strip_accents)  # type: ignore[arg-type]


@click.command("train")
@click.argument("corpus", nargs=-1, required=True, metavar="CORPUS...")
@click.option(
    "--algo",
    type=click.Choice(ALGOS),
    default="spm-unigram",
    show_default=True,
    help="spm-*: the sentencepiece library (byte-identical reruns); unigram/bpe/wordpiece: the "
    "HF tokenizers trainers (see docs/training.md: which algorithm).",
)
@click.option("--vocab-size", type=click.IntRange(min=1), default=32000, show_default=True,
              help="Pieces in the final vocabulary, special tokens included (exact, or an error says why).")
@click.option("--lower/--cased", default=False, show_default=True,
              help="Lowercase (accents are kept: Hôpital -> hôpital).")
@click.option("--normalize/--no-normalize", default=True, show_default=True,
              help="biotok normalization (Unicode, typography, punctuation spacing); --no-normalize = raw text.")
@click.option("--unicode", type=click.Choice(["NFKC", "NFC"]), default="NFKC", show_default=True,
              help="Unicode normalization form (see docs/normalization.md).")
@click.option("--strip-accents", is_flag=True, help="Also remove accents (off by default).")
@click.option("--min-frequency", type=click.IntRange(min=1), default=2, show_default=True,
              help="bpe/wordpiece: minimum count of a merge.")
@click.option("--max-piece-length", type=click.IntRange(min=1), default=16, show_default=True)
@click.option("--punct-pieces/--no-punct-pieces", default=True, show_default=True,
              help="unigram/spm-unigram on spaced punctuation: learn '▁,' '▁.' ... (else each mark costs 2 pieces).")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed (SentencePiece sampling).")
@click.option("--field", "field_name", default=None, metavar="NAME",
              help="JSON field holding the text in .jsonl inputs (default: text).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output directory [default: ./biotok-ALGO-(lower|cased)-VOCAB].")
@click.option("--force", is_flag=True, help="Replace --out if it exists.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
def train(corpus, algo, vocab_size, lower, normalize, unicode, strip_accents, min_frequency,
          max_piece_length, punct_pieces, seed, field_name, out, force, quiet) -> None:
    """Train a tokenizer on CORPUS (files, directories, .gz/.xz/.bz2, .jsonl, or - for stdin).

    The result is a directory that transformers.AutoTokenizer.from_pretrained loads as is,
    with biotok's normalizer saved inside tokenizer.json and provenance in biotok.json.

    \b
    The AliBERT paper's variants:
      biotok train corpus.txt --cased                   # Unigram (SentencePiece trainer)
      biotok train corpus.txt --lower                   # Unigram_L
      biotok train corpus.txt --no-normalize            # Unigram_N_N
      biotok train corpus.txt --algo unigram --lower    # Unigram_L, HF tokenizers trainer
      biotok train corpus.txt --algo wordpiece          # WordPiece
      biotok train corpus.txt --algo bpe                # BPE
    """
    from biotok.train import default_out, train_tokenizer

    cfg = TrainConfig(
        algo=algo,
        vocab_size=vocab_size,
        normalize=_normalize_config(lower, normalize, unicode, strip_accents),
        seed=seed,
        min_frequency=min_frequency,
        max_piece_length=max_piece_length,
        field_name=field_name,
        punct_pieces=punct_pieces,
    )
    result = train_tokenizer(list(corpus), cfg, out or default_out(cfg), force=force, progress=not quiet)
    c = result.corpus
    click.echo(
        f"trained {algo}: {result.vocab_size:,} pieces from {c['lines']:,} lines "
        f"({c['words']:,} words) in {result.seconds:.1f} s -> {result.path}"
    )


@click.command("count")
@click.argument("corpus", nargs=-1, required=True, metavar="CORPUS...")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="TSV file: word<TAB>count, most frequent first ('-' for stdout).")
@click.option("--lower/--cased", default=False, show_default=True)
@click.option("--normalize/--no-normalize", default=True, show_default=True)
@click.option("--unicode", type=click.Choice(["NFKC", "NFC"]), default="NFKC", show_default=True)
@click.option("--field", "field_name", default=None, metavar="NAME",
              help="JSON field holding the text in .jsonl inputs (default: text).")
@click.option("--force", is_flag=True, help="Replace --out if it exists.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def count(corpus, out, lower, normalize, unicode, field_name, force, quiet) -> None:
    """Count normalized words of CORPUS in one streaming pass (memory ~ distinct words).

    These are the counts the spm-* trainers learn from; they also feed
    `spm_train --input_format=tsv` directly.

    \b
      biotok count corpus.txt.gz --lower --out counts.tsv
    """
    from tqdm import tqdm

    from biotok.corpus import count_words, iter_lines, write_counts
    from biotok.normalize import build_normalizer

    to_stdout = str(out) == "-"
    if not to_stdout and out.exists() and not force:
        raise OutputExistsError(f"{out} already exists; pass --force to replace it")
    normalizer = build_normalizer(_normalize_config(lower, normalize, unicode, False))
    lines = iter_lines(corpus, field_name)
    if not quiet:
        lines = tqdm(lines, desc="counting", unit=" lines", mininterval=1.0, file=sys.stderr)
    norm = (normalizer.normalize_str(l) for l in lines) if normalizer else lines
    counts = count_words(norm)
    if not counts:
        raise BiotokError("the corpus is empty: no word to count")
    if to_stdout:
        n = write_counts(counts, sys.stdout)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            n = write_counts(counts, f)
        os.replace(tmp, out)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    click.echo(f"counted {sum(counts.values()):,} words, {n:,} distinct -> {out}", err=True)


def register(group: click.Group) -> None:
    group.add_command(train)
    group.add_command(count)
