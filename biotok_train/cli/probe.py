"""``biotok-train probe``: a causal-LM probe of vocabularies (:mod:`biotok_train.probe`).

Option defaults are the :class:`~biotok_train.config.ProbeConfig` fields; the config checks the
values. torch is imported inside the command, so ``--help`` stays fast.
"""

from __future__ import annotations

import click

from biotok.cli.options import GreedyOption, default_of, field_option, force_option, quiet_option
from biotok.errors import ConfigError
from biotok_train.cli.options import report_to_option
from biotok_train.config import PAIRS, ProbeConfig


def _d(name: str):
    return default_of(ProbeConfig, name)


@click.command("probe")
@click.argument("tokenizers", nargs=-1, required=True)
@click.option("--corpus", "corpus", cls=GreedyOption, multiple=True, required=True,
              help="Training text: files (one document a line, or one .jsonl record; .gz, .xz read too).")
@click.option("--heldout", "heldout", cls=GreedyOption, multiple=True, required=True,
              help="Held-out text scored in bits per character (one document a line, or one .jsonl record).")
@click.option("--steps", type=int, default=None, help=f"Optimizer steps per arm [{_d('steps')}].")
@click.option("--tokens", type=int, default=None,
              help="Training tokens per arm instead of --steps (rounded up to whole steps).")
@click.option("--seeds", "seeds", cls=GreedyOption, multiple=True, type=int, default=_d("seeds"), show_default=True,
              help="One model per arm and seed.")
@click.option("--batch-size", type=int, default=_d("batch_size"), show_default=True, help="Sequences per step.")
@click.option("--seq-len", type=int, default=_d("seq_len"), show_default=True, help="Tokens per sequence.")
@click.option("--layers", type=int, default=_d("layers"), show_default=True)
@click.option("--hidden", type=int, default=_d("hidden"), show_default=True)
@click.option("--heads", type=int, default=_d("heads"), show_default=True)
@click.option("--lr", type=float, default=_d("lr"), show_default=True, help="Peak learning rate (AdamW).")
@click.option("--warmup", type=float, default=_d("warmup"), show_default=True,
              help="Warm-up: a fraction of the steps (< 1) or a number of steps.")
@click.option("--fair", is_flag=True, default=_d("fair"),
              help="Train and score every arm on the same text, lowercased / stripped of accents when one "
                   "tokenizer discards case / accents.")
@field_option
@click.option("--bf16/--no-bf16", default=_d("bf16"), show_default=True,
              help="bf16 autocast where supported (a CPU with amx_bf16 or avx512_bf16, CUDA); elsewhere fp32.")
@click.option("--n-resamples", type=int, default=_d("n_resamples"), show_default=True, help="Bootstrap resamples.")
@click.option("--threads", type=int, default=_d("threads"), show_default=True,
              help="torch CPU threads while training; 0: torch's default. The thread count moves bits per "
                   "character in their last digits: pin it (e.g. 1) for byte-identical results across machines.")
@click.option("--pairs", type=click.Choice(PAIRS), default=_d("pairs"), show_default=True,
              help="Compare each arm with the first (reference) or every pair of arms (all).")
@report_to_option
@click.option("--out", required=True, type=click.Path(path_type=str),
              help="Output folder (rerunning the same command resumes it).")
@force_option
@quiet_option
def probe_cmd(tokenizers, corpus, heldout, steps, tokens, seeds, out, force, quiet, **fields):
    """Train one small GPT-2 per TOKENIZER on the same text and compare bits per character.

    Every arm gets the same model shape, training tokens and seeds; each is scored on the
    held-out text in bits per character, against its unigram floor and (paired bootstrap over
    held-out documents) against the first tokenizer, or every pair with --pairs all. Off a
    terminal it logs a line at least every 30 s ($BIOTOK_PROGRESS_SECONDS) with an ETA from the
    measured rate, and before training it prints the estimated time of the whole probe. Writes probe.md, probe.json, probe.png and
    timings.json to --out; finished runs are cached there and skipped on a rerun. One probe at a
    time writes an --out; --force builds the new probe beside it (in the hidden .OUT.probe-next, kept
    after a stop only when it holds finished runs, which the same command continues from) and
    replaces the old one only once complete.

    \b
    Example:  biotok-train probe tokA/ tokB/ --corpus train.txt --heldout heldout.txt \\
                  --steps 300 --seeds 0 1 2 --out probe/
    """
    from biotok_train.probe import run_probe

    if steps is not None and tokens is not None:
        raise ConfigError("give --steps or --tokens, not both")
    cfg = ProbeConfig(tokenizers=tuple(tokenizers), corpus=tuple(corpus), heldout=tuple(heldout),
                      steps=steps if steps is not None else _d("steps"), tokens=tokens or 0, seeds=tuple(seeds),
                      **fields)
    report = run_probe(cfg, out, force=force, progress=not quiet)
    ref = report.arms[0]["name"]
    for r in report.arms:
        click.echo(f"{r['name']}: {r['bits_per_char']['mean']:.4f} bits/char (unigram floor "
                   f"{r['unigram_floor_bits_per_char']:.4f})")
    cpu = sum(t["train_cpu_s"] + t["eval_cpu_s"] for t in report.timings.values())
    wall = sum(t["train_wall_s"] + t["eval_wall_s"] for t in report.timings.values())
    click.echo(f"{report.paths['md']} (reference {ref}; runs took {cpu:,.0f} CPU-s, {wall:,.0f} s wall: timings.json)")


COMMANDS = (probe_cmd,)
