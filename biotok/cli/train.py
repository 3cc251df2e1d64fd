"""``biotok train`` and ``biotok count``: a few lines each over :mod:`biotok.train` and the corpus."""

from __future__ import annotations

import logging
from pathlib import Path

import click

from biotok.cli.options import field_option, force_option, normalize_options, quiet_option
from biotok.cli.push import push_and_say, push_to_hub_option
from biotok.config import ALGO_ALIASES, ALGOS, BACKEND_NAMES, NormalizeConfig, TrainConfig
from biotok.corpus import corpus_names
from biotok.counting import count_corpus, save_counts
from biotok.errors import CorpusError
from biotok.output import check_writable_file
from biotok.train import default_out, train_tokenizer

_T = TrainConfig()


_ALGO_CHOICES = (*ALGOS, *ALGO_ALIASES)
workers_option = click.option(
    "--workers", type=click.IntRange(min=1), default=None,
    help="Processes for the first pass (normalize + count words) [default: every core]; the result "
    "never depends on it.",
)


@click.command("train")
@click.argument("corpus", nargs=-1, required=True, metavar="CORPUS...")
@click.option(
    "--algo",
    type=click.Choice(_ALGO_CHOICES),
    default=_T.algo,
    show_default=True,
    help="unigram, bpe or wordpiece (spm-unigram / spm-bpe: aliases of --algo unigram / bpe "
    "--backend sentencepiece). See docs/training.md: which algorithm.",
)
@click.option(
    "--backend", type=click.Choice(BACKEND_NAMES), default=None,
    help="The library that trains it [default: the algorithm's best: sentencepiece for unigram, "
    "tokenizers for bpe and wordpiece].",
)
@click.option("--vocab-size", type=click.IntRange(min=1), default=_T.vocab_size, show_default=True,
              help="Pieces in the final vocabulary, special tokens included (exact, or an error says why).")
@normalize_options
@click.option("--min-frequency", type=click.IntRange(min=1), default=_T.min_frequency, show_default=True,
              help="bpe/wordpiece (tokenizers): minimum count of a merge.")
@click.option("--max-piece-length", type=click.IntRange(min=1), default=_T.max_piece_length, show_default=True,
              help="Longest piece, in characters.")
@click.option("--punct-pieces/--no-punct-pieces", default=_T.punct_pieces, show_default=True,
              help="unigram on spaced punctuation: learn '▁,' '▁.' ... (else each mark costs 2 pieces).")
@click.option("--byte-fallback", is_flag=True, default=_T.byte_fallback,
              help="sentencepiece: unknown characters become UTF-8 byte pieces, never <unk> (256 pieces).")
@click.option("--seed-text-mb", type=click.IntRange(min=0), default=_T.seed_text_mb, show_default=True,
              help="sentencepiece unigram: memory budget; counts are scaled so its seed text fits "
              "(peak RSS about 13 x this; 0: exact counts, memory grows with the corpus).")
@click.option("--from-counts", is_flag=True,
              help="The arguments are `biotok count` outputs (word<TAB>count), not text: their counts "
              "add up, so shards counted apart train as one corpus.")
@workers_option
@click.option("--seed", type=int, default=_T.seed, show_default=True, help="Random seed (SentencePiece).")
@field_option
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output directory [default: ./biotok-ALGO-(lower|cased)-VOCAB].")
@force_option
@quiet_option
@push_to_hub_option
@click.option("--verbose", "-v", is_flag=True,
              help="Also show the trainer's own log (SentencePiece's C++ messages) and debug notes.")
def train(corpus, algo, backend, vocab_size, lower, normalize, unicode, strip_accents, min_frequency,
          max_piece_length, punct_pieces, byte_fallback, seed_text_mb, from_counts, workers, seed, field_name,
          out, force, quiet, push_to_hub, verbose) -> None:
    """Train a tokenizer on CORPUS (files, directories, .gz/.xz/.bz2, .jsonl, or - for stdin).

    The result is a directory that transformers.AutoTokenizer.from_pretrained loads as is,
    with biotok's normalizer saved inside tokenizer.json and provenance in biotok.json. The
    same corpus, options and seed give the same tokenizer.json bytes, with any --workers.

    \b
    The AliBERT paper's variants:
      biotok train corpus.txt --cased                   # Unigram (SentencePiece trainer)
      biotok train corpus.txt --lower                   # Unigram_L
      biotok train corpus.txt --no-normalize            # Unigram_N_N
      biotok train corpus.txt --algo wordpiece          # WordPiece
      biotok train corpus.txt --algo bpe                # BPE
    Counted on many machines, trained once:
      biotok count shard1.txt --lower --out s1.tsv      # one per shard / job
      biotok train --from-counts s1.tsv s2.tsv --lower  # the counts add up
    """
    if verbose:
        logging.getLogger("biotok").setLevel(logging.DEBUG)
    norm = NormalizeConfig.from_switches(lowercase=lower, normalize=normalize, unicode=unicode,
                                         strip_accents=strip_accents)
    cfg = TrainConfig(algo=algo, backend=backend, vocab_size=vocab_size, normalize=norm, seed=seed,
                      min_frequency=min_frequency, max_piece_length=max_piece_length, field_name=field_name,
                      punct_pieces=punct_pieces, byte_fallback=byte_fallback, seed_text_mb=seed_text_mb)
    text, counts = ([], list(corpus)) if from_counts else (list(corpus), [])
    result = train_tokenizer(text, cfg, out or default_out(cfg), force=force, progress=not quiet,
                             workers=workers, from_counts=counts)
    click.echo(result.summary())
    push_and_say(result.path, push_to_hub)


@click.command("count")
@click.argument("corpus", nargs=-1, required=True, metavar="CORPUS...")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="TSV file: word<TAB>count, most frequent first ('-' for stdout); OUT.json beside it "
              "records the normalization and the corpus.")
@normalize_options
@field_option
@workers_option
@force_option
@quiet_option
def count(corpus, out, lower, normalize, unicode, strip_accents, field_name, workers, force, quiet) -> None:
    """Count the normalized words of CORPUS on every core (memory ~ distinct words).

    These are the counts every trainer learns from. Counts of shards add up: count each shard
    (one per machine or job), then `biotok train --from-counts A.tsv --from-counts B.tsv`.
    `spm_train --input_format=tsv` reads them too, but from one word a line it seeds no whole word
    that begins no other (`avec` -> `▁a vec`); `biotok train --from-counts` writes them so it does.

    \b
      biotok count corpus.txt.gz --lower --out counts.tsv
    """
    to_stdout = str(out) == "-"
    if not to_stdout:
        check_writable_file(out, force, corpus)  # fail before reading the corpus
    norm = NormalizeConfig.from_switches(lowercase=lower, normalize=normalize, unicode=unicode,
                                         strip_accents=strip_accents)
    counted = count_corpus(list(corpus), norm, field_name=field_name, workers=workers, progress=not quiet)
    if not counted.counts:
        raise CorpusError(f"the corpus {corpus_names(corpus)} is empty: no word to count")
    n = save_counts(counted, out, norm, field_name, force=force, inputs=corpus)
    if not to_stdout:
        click.echo(f"counted {sum(counted.counts.values()):,} words, {n:,} distinct -> {out}", err=True)


__all__ = ["count", "train"]
