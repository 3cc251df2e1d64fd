"""``biotok-train ablate``: the command over :func:`biotok_train.ablate.run_ablation`.

Its options, and the way back from an :class:`~biotok_train.ablate.config.AblationConfig` to them,
live in :mod:`biotok_train.ablate.command` (the report spells its command line from them).
"""

from __future__ import annotations

import click

from biotok_train.ablate import run_ablation
from biotok_train.ablate.command import ENGINE_OPTIONS, ablate_options, ablation_config, engine_config
from biotok_train.ablate.config import check_precision


def _engine_options(f):
    for option in reversed(ENGINE_OPTIONS):
        f = option(f)
    return f


@click.command("ablate")
@ablate_options
@_engine_options
def ablate_cmd(out, quiet, force, **options) -> None:
    """Which vocabulary wins: the same budget for each tokenizer, seeds, floors, intervals, verdicts.

    Per size and tokenizer: pretrain, eval-mlm and fine-tune every --task for each seed pair,
    plus a random-init floor; ablation.md gives mean ± std, paired bootstrap intervals against
    the first tokenizer and a verdict per cell. Resumable: finished parts are reused.

    With --base MODEL_DIR and --arms scratch,continual,transfer (PubMedBERT's Table 9): the
    base continued with its own vocabulary (the reference), and per tokenizer the base moved to
    it and continued, and its architecture trained from scratch with it; all on the same budget.

    \b
    Every part is a job with a done record: a rerun skips what is done, a failed job is one line
    and the others go on; the report is written once every job is done (else exit 2, and the same
    command resumes). --engine ray runs the jobs in parallel (--workers N on this machine,
    --address for a Ray cluster, --gpus-per-job 0.5 to share a GPU between two fine-tunings).
    --only runs one piece of the grid (a pretraining and its fine-tunings in a short GPU slot);
    --precision writes the report on a laptop from records that pieces made on a GPU.

    \b
    Example:  biotok-train ablate --tokenizers tokA/ tokB/ --corpus corpus.txt --task e3c \\
                --sizes tiny,small --seeds 0 1 --out ablation/
              biotok-train ablate --tokenizers tok-clinical/ --corpus cases.txt --task e3c \\
                --base camembert-base/ --arms general,continual,transfer,scratch \\
                --transfer-methods fvt,random --curve 250,500 --engine ray --workers 4 --out table9/
              biotok-train ablate --tokenizers tokA/ tokB/ --corpus corpus.txt --budget 16000 \\
                --curve 2000,4000,8000 --curve-tasks none --no-floor --out plateau/   # when do they leave the plateau?
    """
    engine, precision = engine_config(options), check_precision(options.pop("precision"))
    report = run_ablation(ablation_config(**options), out, progress=not quiet, engine=engine, force=force,
                          precision=precision)
    if report is None:  # --only: a piece ran, other jobs have no record yet
        click.echo(f"the jobs of --only {' '.join(engine.only)} are done; the report waits for the others "
                   f"(run them with other --only patterns, or without --only)", err=True)
        return
    click.echo(report.markdown)
    click.echo(f"wrote {report.markdown_path}, {report.json_path} and {report.png_path}", err=True)


COMMANDS = (ablate_cmd,)
