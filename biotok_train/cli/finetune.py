"""``biotok-train finetune | bench``: any named task or a user's own files, and whole suites.

Thin wrappers over :func:`biotok_train.finetune.finetune` and
:func:`biotok_train.finetune.bench.run_bench`; every default is a config field
(:class:`~biotok_train.config.FinetuneConfig`, :class:`~biotok_train.config.BenchConfig`).
torch and transformers are imported inside the commands, so ``--help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path

import click

from biotok.cli.push import push_and_say, push_to_hub_option
from biotok.cli.options import (GreedyOption, data_dir_option, default_of, force_option, progress_lines_option,
                                quiet_option)
from biotok.errors import ConfigError
from biotok_train.cli.options import finetune_options, recipe_options, stack
from biotok_train.tasks.options import user_task_files, user_task_options
from biotok_train.config import RELATION_INPUTS, SCHEMES, SUITES, BenchConfig, FinetuneConfig


_FT = FinetuneConfig()  # the defaults, its optimizer's included


def _floats(ctx, param, value: str | None) -> tuple[float, ...]:
    if not value:
        return ()
    try:
        return tuple(float(x) for x in value.replace(" ", "").split(",") if x)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a comma-separated list of numbers (e.g. 1e-5,3e-5,5e-5)") from None


task_options = stack(
    click.option("--scheme", type=click.Choice(SCHEMES), default=_FT.scheme, show_default=True,
                 help="NER tags the model learns (scored as IOB2 entities either way)."),
    click.option("--relation-input", type=click.Choice(RELATION_INPUTS), default=_FT.relation_input,
                 show_default=True, help="Relations: BLURB's entity masks, or [E1]..[/E1] marker tokens."),
    click.option("--layer-decay", type=float, default=_FT.optim.layer_decay, show_default=True,
                 help="Layer-wise lr decay (ELECTRA): layer l of L gets lr*decay^(L+1-l); 1: off."),
    click.option("--lr-grid", callback=_floats, default=None, metavar="LR,LR,...",
                 help="Several peak lrs, one run each, the best dev score kept (e.g. 1e-5,3e-5,5e-5)."),
    click.option("--train-fraction", type=float, default=_FT.train_fraction, show_default=True,
                 help="Share of the training examples used (few-shot curves; a fixed subset)."),
    click.option("--threshold", type=float, default=_FT.threshold,
                 help="Sigmoid threshold of multi-label / multiple-choice decisions [default: the task's: chosen "
                 "on dev for MORFITT, else 0.5]."),
)

cache_option = click.option(
    "--cache", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Folder for rebuilt data (ChemProt, DDI) [default: $BIOTOK_CACHE, else ~/.cache/biotok].",
)


@click.command("finetune")
@click.argument("model")
@click.option("--task", "task_name", default=None, metavar="NAME|PATH",
              help="A named task (biotok-train finetune --list shows them), e.g. chemprot, hoc, frenchmedmcqa; "
                   "or a BIO file/folder (NER).")
@user_task_options
@click.option("--labels", default=None, metavar="L,L,...",
              help="With --task-type: the label set (entity types for ner) [default: those of --train].")
@click.option("--list", "list_tasks", is_flag=True, help="List the named tasks and exit.")
@data_dir_option
@cache_option
@finetune_options
@task_options
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write results.json, predictions.jsonl (and test_predictions.tsv) here.")
@force_option
@quiet_option
@progress_lines_option
@push_to_hub_option
def finetune_cmd(model, task_name, task_type, train_file, dev_file, test_file, labels, list_tasks, data_dir, cache,
                 out, force, quiet, progress, push_to_hub, **options) -> None:
    """Fine-tune MODEL on a named task, or on your own files, and score test with the task's metric.

    \b
    Examples:
      biotok-train finetune runs/bert-tiny --task chemprot --seed 1 --out results/chemprot
      biotok-train finetune runs/bert-tiny --task hoc --lr-grid 1e-5,3e-5,5e-5
      biotok-train finetune runs/bert-tiny --task-type classify --train tr.tsv --dev dv.tsv --test te.tsv
    """
    from biotok_train.tasks import TASKS, load

    if list_tasks:
        for spec in TASKS.values():
            click.echo(f"{spec.name:<20}{spec.suite or '-':<7}{spec.task_type:<17}{spec.metric:<24}{spec.description}")
        return
    cfg = FinetuneConfig.from_options(**options)  # options are checked before any data is read
    if push_to_hub and out is None:
        raise ConfigError("--push-to-hub needs --out: the folder to publish")
    if (task_name is None) == (task_type is None):
        raise ConfigError("give --task NAME, or --task-type TYPE with --train, --dev and --test (one of the two)")
    if task_type is not None:
        files = user_task_files(task_type, train_file, dev_file, test_file)  # the checks ablate's --task-type makes
        names = [x.strip() for x in labels.split(",") if x.strip()] if labels else None
        dataset = load(tuple(Path(f) for f in files), task_type=task_type, labels=names)
    else:
        if train_file or dev_file or test_file or labels:
            raise ConfigError("--train/--dev/--test/--labels go with --task-type, not with --task")
        dataset = task_name
    from biotok_train.finetune import finetune, format_result

    result = finetune(model, dataset, cfg, out, data_dir=data_dir, cache=cache, force=force, progress=not quiet,
                      bar=progress and not quiet)
    click.echo(format_result(result))
    push_and_say(out, push_to_hub)


@click.command("bench")
@click.argument("model")
@click.option("--suite", type=click.Choice(SUITES), default=default_of(BenchConfig, "suite"), show_default=True,
              help="blurb (BLURB, English) or fr (DrBenchmark-style, French).")
@click.option("--seeds", "seeds", cls=GreedyOption, multiple=True, type=int, default=default_of(BenchConfig, "seeds"),
              show_default=True, help="Fine-tuning seeds; a task's score is their mean ± std.")
@click.option("--tasks", "tasks", cls=GreedyOption, multiple=True, metavar="NAME...",
              help="Run these named tasks only [default: every task of the suite].")
@data_dir_option
@cache_option
@recipe_options
@task_options
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Write bench.md, bench.json, bench.png and runs/ here.")
@force_option
@quiet_option
@progress_lines_option
def bench_cmd(model, suite, seeds, tasks, data_dir, cache, out, force, quiet, progress, **options) -> None:
    """Fine-tune MODEL on a suite's tasks over seeds: each task's benchmark score and the suite score.

    The suite score is the BLURB one: the mean of the task scores within each family (NER,
    relation, similarity, classification, QA), then over the families.

    \b
    Examples:
      biotok-train bench runs/bert-base --suite blurb --seeds 0 1 2 --out bench/blurb
      biotok-train bench runs/bert-tiny --suite fr --tasks e3c morfitt --seeds 0 --out bench/fr
    """
    from biotok_train.finetune.bench import format_bench, run_bench

    cfg = BenchConfig(suite=suite, seeds=tuple(seeds), tasks=tuple(tasks), finetune=FinetuneConfig.from_options(**options))
    result = run_bench(model, cfg, out, data_dir=data_dir, cache=cache, force=force, progress=not quiet,
                       bar=progress and not quiet)
    click.echo(format_bench(result))
    click.echo(f"wrote {Path(out) / 'bench.md'}, bench.json, bench.png and runs/", err=True)


COMMANDS = (finetune_cmd, bench_cmd)
