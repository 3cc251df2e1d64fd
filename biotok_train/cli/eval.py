"""``biotok-train ner | classify | eval-mlm | fill-mask``: thin wrappers over the Python API.

``ner`` and ``classify`` are aliases of ``finetune --task`` (kept for their short names and
scripts that use them); every task, named or a user's files, runs through ``finetune``.

torch and transformers are imported inside the commands, so ``--help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path

import click

from biotok.errors import ConfigError
from biotok.cli.options import data_dir_option, field_option, force_option, quiet_option
from biotok_train.cli.finetune import finetune_cmd
from biotok_train.cli.options import finetune_options, param_default
from biotok_train.tasks import TASKS
from biotok_train.evaluate.fillmask import fill_mask
from biotok_train.evaluate.masked_words import eval_mlm


def _alias(ctx: click.Context, task_type: str, model: str, data: str, **options) -> None:
    """Run ``finetune MODEL --task DATA`` with the same options, after checking that DATA is a
    task of ``task_type`` (a named one, or for ner a BIO path)."""
    spec = TASKS.get(data)
    if spec is None and task_type != "ner":
        names = ", ".join(n for n, t in TASKS.items() if t.task_type == task_type)
        raise ConfigError(f"unknown {task_type} task {data!r} (one of {names}; or use biotok-train finetune)")
    if spec is not None and spec.task_type != task_type:
        raise ConfigError(f"{data!r} is a {spec.task_type} task, not {task_type}: "
                          f"use biotok-train finetune --task {data}")
    sub = finetune_cmd.make_context("finetune", ["--task", data, "--", model], parent=ctx)  # its defaults
    sub.params.update(options)
    with sub:
        finetune_cmd.invoke(sub)


@click.command("ner")
@click.argument("model")
@click.option("--data", required=True, metavar="NAME|PATH",
              help=f"A named NER task ({', '.join(n for n, t in TASKS.items() if t.task_type == 'ner')}), "
                   "or a BIO file/folder.")
@data_dir_option
@finetune_options
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write results.json, predictions.jsonl and test_predictions.tsv here.")
@force_option
@quiet_option
@click.pass_context
def ner(ctx, model, data, **options) -> None:
    """Alias of `finetune MODEL --task DATA` for NER tasks: seqeval entity F1 (strict IOB2) on test.

    \b
    Example:  biotok-train ner runs/bert-tiny --data quaero-medline --epochs 3 --out results/ner
    """
    _alias(ctx, "ner", model, data, **options)


@click.command("classify")
@click.argument("model")
@click.option("--data", default="frenchmedmcqa-nbr", show_default=True, metavar="NAME",
              help="A named classification task: frenchmedmcqa-nbr, the number of correct answers (1-5) of a "
                   "FrenchMedMCQA question.")
@data_dir_option
@finetune_options
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write results.json, predictions.jsonl and test_predictions.tsv here.")
@force_option
@quiet_option
@click.pass_context
def classify(ctx, model, data, **options) -> None:
    """Alias of `finetune MODEL --task DATA` for single-label classification tasks.

    \b
    Example:  biotok-train classify runs/bert-tiny --data frenchmedmcqa-nbr --out results/mcqa
    """
    _alias(ctx, "classify", model, data, **options)


@click.command("eval-mlm")
@click.argument("model")
@click.option("--corpus", "corpus", multiple=True, required=True, help="Text file(s), .gz/.xz, .jsonl (repeatable).")
@field_option
@click.option("--n-words", type=int, default=param_default(eval_mlm, "n_words"), show_default=True,
              help="Words to sample and score.")
@click.option("--seed", type=int, default=param_default(eval_mlm, "seed"), show_default=True,
              help="Picks the words (not the model).")
@click.option("--batch-size", type=int, default=param_default(eval_mlm, "batch_size"), show_default=True,
              help="Hypotheses per forward pass.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Results JSON.")
@force_option
def eval_mlm_cmd(model, corpus, field_name, n_words, seed, batch_size, out, force) -> None:
    """Masked whole-word accuracy top-1/3/5 of MODEL on words sampled from --corpus.

    \b
    Example:  biotok-train eval-mlm runs/bert-tiny --corpus heldout.txt --n-words 1000
    """
    from biotok_train.evaluate.masked_words import format_mlm

    result = eval_mlm(model, list(corpus), n_words, seed, field_name=field_name, out=out, batch_size=batch_size,
                      force=force)
    click.echo(format_mlm(result))


@click.command("fill-mask")
@click.argument("model")
@click.argument("text", required=False)
@click.option("--top-k", "-k", type=int, default=param_default(fill_mask, "k"), show_default=True,
              help="Fillers shown per mask.")
@click.option("--cloze", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Score a cloze TSV (e.g. corpora/cloze/fr_medical_cloze.tsv) instead of TEXT.")
def fill_mask_cmd(model, text, top_k, cloze) -> None:
    """Top-k fillers for each <mask> (or [MASK]) in TEXT, or whole-word accuracy on --cloze.

    \b
    Example:  biotok-train fill-mask runs/bert-tiny "Le patient présente une <mask> aiguë."
    """
    from biotok_train.evaluate.fillmask import cloze_accuracy, format_fillers, read_cloze
    from biotok_train.evaluate.masked_words import format_mlm
    from biotok_train.hf_models import load_mlm

    if (text is None) == (cloze is None):
        raise ConfigError("give TEXT with a <mask>, or --cloze FILE (one of the two)")
    if cloze is not None:
        read_cloze(cloze)  # validate before loading the model
        click.echo(format_mlm(cloze_accuracy(*load_mlm(model), cloze, name=model)))
    else:
        click.echo(format_fillers(text, fill_mask(*load_mlm(model), text, top_k)))


COMMANDS = (ner, classify, eval_mlm_cmd, fill_mask_cmd)
