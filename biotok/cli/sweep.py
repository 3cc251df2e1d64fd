"""``biotok sweep`` and ``biotok cost``: a few lines each over :mod:`biotok.sweep` and :mod:`biotok.cost`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from biotok.cli.options import field_option, force_option, normalize_options, progress_option, tokenizer_options
from biotok import config as _config
from biotok.config import ALGOS, CostConfig, NormalizeConfig, SweepConfig, TrainConfig
from biotok.corpus import corpus_names, iter_lines
from biotok.cost import estimate_cost, parse_size, sample_corpus
from biotok.formats import load_many

_T = TrainConfig()
_ALGO_CHOICES = tuple(ALGOS) + tuple(getattr(_config, "ALGO_ALIASES", ()))  # e.g. spm-unigram, where defined
_S = SweepConfig()
_C = CostConfig()


def _sizes(_ctx, _param, value: str) -> tuple[int, ...]:
    try:
        return tuple(int(x.replace("_", "")) for x in value.split(",") if x.strip())
    except ValueError:
        raise click.BadParameter(f"expected comma-separated integers, e.g. 8000,16000,32000, not {value!r}") from None


@click.command("sweep")
@click.argument("corpus", nargs=-1, required=True, metavar="CORPUS...")
@click.option("--sizes", default=",".join(str(s) for s in _S.sizes), show_default=True, callback=_sizes,
              help="Vocabulary sizes to train, comma-separated.")
@click.option("--algo", type=click.Choice(_ALGO_CHOICES), default=_T.algo, show_default=True,
              help="Training algorithm (as in biotok train).")
@normalize_options
@click.option("--seed", type=int, default=_T.seed, show_default=True, help="Random seed of every training.")
@click.option("--hidden-size", type=click.IntRange(min=1), default=_S.hidden_size, show_default=True,
              help="Model width, for the embedding parameters (vocab x hidden).")
@click.option("--heldout-fraction", type=float, default=_S.heldout_fraction, show_default=True,
              help="Share of the corpus lines held out (by hash) to measure on, when no --eval-corpus is given.")
@click.option("--eval-corpus", multiple=True, metavar="PATH",
              help="Measure on this text instead of a held-out share (then all of CORPUS is trained on); repeatable.")
@field_option
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Output folder: tokenizers/, sweep.json, sweep.md, sweep.png.")
@force_option
@progress_option
def sweep(corpus, sizes, algo, lower, normalize, unicode, strip_accents, seed, hidden_size, heldout_fraction,
          eval_corpus, field_name, out, force, progress) -> None:
    """Train CORPUS at several vocabulary sizes and find the knee of the fertility curve.

    Each size is trained with the same algorithm, normalization and seed on the corpus minus a
    held-out share of its lines, then measured on those lines: fertility, pieces per line and
    embedding parameters against size, with the knee found by Kneedle (docs/compare.md). It also
    fits a power law (Zipf) to each size's piece frequencies on the held-out text (log-log least
    squares of frequency against rank): the exponent and R² per size, and the size whose pieces
    follow a Zipf law most closely ("best Zipf fit").

    \b
    Example:
      biotok sweep corpus.txt.gz --sizes 8000,16000,32000,48000,64000 --lower --out sweep/
    """
    # lazy: numpy and matplotlib (biotok.sweep) stay out of the CLI's start-up
    from biotok.sweep import sweep as run_sweep

    norm = NormalizeConfig.from_switches(lowercase=lower, normalize=normalize, unicode=unicode,
                                         strip_accents=strip_accents)
    cfg = SweepConfig(sizes=sizes, hidden_size=hidden_size, heldout_fraction=heldout_fraction)
    r = run_sweep(list(corpus), out, cfg, TrainConfig(algo=algo, normalize=norm, seed=seed),
                  eval_corpus=list(eval_corpus) or None, field_name=field_name, force=force,
                  progress=progress)
    from biotok.sweep import criteria_sentence  # lazy: as above

    for p in r.points:
        mark = ("  <- knee" if p.vocab_size == r.knee else "") + ("  <- best Zipf fit" if p.vocab_size == r.zipf_best else
                                                             "  <- indistinguishable Zipf fit" if p.vocab_size in r.zipf_tied else "")
        zipf = f"Zipf R² {p.zipf_r2:.4f}" if p.zipf_r2 is not None else "Zipf R² -"
        click.echo(f"{p.vocab_size:>8,}  fertility {p.fertility:.3f}  pieces/line {p.mean_sequence_length:7.1f}  "
                   f"embedding {p.embedding_params / 1e6:6.1f} M  {zipf}{mark}")
    for size, why in r.skipped:
        click.echo(f"{size:>8,}  skipped: {why}")
    click.echo(criteria_sentence(r).replace("**", ""))
    click.echo(f"written to {out}/ (sweep.md, sweep.png, sweep.json, tokenizers/)")


@click.command("cost")
@click.argument("tokenizers", nargs=-1, required=True, metavar="TOKENIZER...")
@click.option("--corpus", multiple=True, required=True, metavar="PATH",
              help="A sample of the pretraining corpus (text, .gz/.xz/.bz2, .jsonl, dir); repeatable.")
@click.option("--corpus-size", default=None, metavar="SIZE",
              help="Size of the full corpus in bytes of text (7GB, 453.7MB, 2GiB) [default: the size of --corpus].")
@click.option("--tokens-per-second", type=float, default=_C.tokens_per_second,
              help="Training throughput per GPU [default: biotok's measured table, "
                   "biotok/data/pretrain_throughput.json, shipped with biotok].")
@click.option("--gpus", type=click.IntRange(min=1), default=_C.gpus, show_default=True, help="GPUs training together.")
@click.option("--epochs", type=float, default=_C.epochs, show_default=True, help="Passes over the corpus.")
@click.option("--batch-size", type=click.IntRange(min=1), default=_C.batch_size, show_default=True,
              help="Sequences per optimizer step (all GPUs together).")
@click.option("--seq-len", type=click.IntRange(min=1), default=_C.seq_len, show_default=True,
              help="Tokens per sequence (packed).")
@click.option("--hidden-size", type=click.IntRange(min=1), default=_C.hidden_size, show_default=True,
              help="Model width, for the embedding and output-layer parameters.")
@click.option("--untied", is_flag=True, default=not _C.tied_embeddings,
              help="The MLM output layer has its own V x H weights (default: tied to the input embedding).")
@click.option("--sample-lines", type=click.IntRange(min=1), default=_C.sample_lines, show_default=True,
              help="Lines sampled (uniformly, seeded) from --corpus to count pieces.")
@field_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@tokenizer_options
def cost(tokenizers, corpus, corpus_size, tokens_per_second, gpus, epochs, batch_size, seq_len, hidden_size, untied,
         sample_lines, field_name, as_json, tokenizers_dir, lowercase) -> None:
    """Tokens per epoch, steps and GPU-hours of pretraining with each vocabulary.

    From a sample of your pretraining corpus, each tokenizer's pieces per byte give the tokens of
    one epoch over the full corpus (--corpus-size); with the batch, sequence length, epochs and a
    throughput per GPU that gives the optimizer steps and GPU-hours; and the embedding parameters
    each vocabulary size adds (formulas in docs/compare.md).

    \b
    Example:
      biotok cost tok/ camemberta --corpus sample.txt --corpus-size 7GB --tokens-per-second 90000 --gpus 8
    """
    # lazy: numpy (biotok.report) stays out of the CLI's start-up
    from biotok.report import json_safe

    cfg = CostConfig(epochs=epochs, batch_size=batch_size, seq_len=seq_len, tokens_per_second=tokens_per_second,
                     gpus=gpus, hidden_size=hidden_size, tied_embeddings=not untied, sample_lines=sample_lines)
    size = parse_size(corpus_size) if corpus_size is not None else None
    toks = load_many(tokenizers, tokenizers_dir=tokenizers_dir, lowercase=lowercase)
    sample = sample_corpus(iter_lines(list(corpus), field_name), cfg.sample_lines, cfg.seed, label=corpus_names(corpus))
    rep = estimate_cost(toks, sample, cfg, corpus_bytes=size)
    if as_json:
        click.echo(json.dumps(json_safe(rep.as_dict()), ensure_ascii=False, indent=2))
        return
    click.echo(f"corpus: {rep.corpus_bytes:,} bytes of text (sample: {rep.sample_lines:,} lines, "
               f"{rep.sample_bytes:,} bytes); {cfg.epochs:g} epoch(s), batch {cfg.batch_size} x {cfg.seq_len} tokens, "
               f"{cfg.gpus} GPU(s)")
    click.echo(f"throughput: {rep.tokens_per_second:,.0f} tokens/s per GPU ({rep.throughput_source})\n")
    head = f"  {'tokenizer':<22} {'vocab':>8} {'tokens/epoch':>16} {'rel.':>6} {'steps':>11} {'GPU-hours':>11} " \
           f"{'wall hours':>11} {'embedding':>10} {'output':>9}"
    click.echo(head)
    click.echo("  " + "-" * (len(head) - 2))
    for c in rep.costs:
        click.echo(f"  {c.name:<22} {c.vocab_size:>8,} {c.tokens_per_epoch:>16,} {c.relative_tokens:>6.3f} "
                   f"{c.steps:>11,} {c.gpu_hours:>11,.1f} {c.wall_hours:>11,.1f} {c.embedding_params / 1e6:>9.1f}M "
                   f"{c.output_params / 1e6:>8.2f}M")


__all__ = ["cost", "sweep"]
