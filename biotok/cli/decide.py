"""``biotok decide``: a few lines over :func:`biotok.decide.decide`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from biotok.config import DecideConfig

_D = DecideConfig()


@click.command("decide")
@click.argument("evidence", nargs=-1, required=True, metavar="EVIDENCE...")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the decision here: .md (Markdown) or .html (a self-contained page); default: print it.")
@click.option("--min-seeds", type=click.IntRange(min=1), default=_D.min_seeds, show_default=True,
              help="Pretraining (ablate) or training (probe) seeds an interval needs to be kept.")
@click.option("--fertility-tolerance", type=click.FloatRange(0, 1, max_open=True), default=_D.fertility_tolerance,
              show_default=True, help="Relative fertility gap under which two vocabularies are not told apart.")
@click.option("--json", "as_json", is_flag=True, help="Print the decision as JSON.")
@click.option("--force", is_flag=True, help="Replace --out if it exists.")
def decide(evidence, out, min_seeds, fertility_tolerance, as_json, force) -> None:
    """Read the evidence you made and state one pick, how sure it is, and what would settle it.

    EVIDENCE: folders written by biotok-train ablate (ablation.json) or probe (probe.json, or its
    raw/ and fair/ subfolders), biotok sweep (sweep.json), and files of `biotok compare --json`.
    Evidence that says nothing is discarded with its reason: an arm that never left the unigram
    plateau, a task on which no arm beats its floor or trivial baseline, fewer seeds than
    --min-seeds, a raw-text probe of vocabularies that normalize differently. The pick comes from
    the most direct evidence kept (downstream tasks, then the models' held-out scores, then
    fertility); the page says where the instruments disagree and, unless downstream tasks decide,
    what run would settle it and its estimated cost on this CPU and on one GPU.

    \b
    Examples:
      biotok compare tok-a/ tok-b/ camemberta --corpus held_out.txt --json > compare.json
      biotok decide compare.json probe/ ablation/ --out decision.html
      biotok decide probe/ --min-seeds 1
    """
    # lazy: the decision module reads JSON only, but the CLI's start-up stays small
    from biotok.decide import decide as run_decide
    from biotok.report.decision import write_decision

    cfg = DecideConfig(min_seeds=min_seeds, fertility_tolerance=fertility_tolerance)
    if out is not None:
        from biotok.output import check_writable_file  # lazy: as above

        check_writable_file(out, force, evidence)  # before reading: never over the evidence
    d = run_decide(evidence, cfg)
    if out is not None:
        write_decision(d, out, force=force, inputs=evidence)
        click.echo(f"decision written to {out}: {d.summary}")
    elif as_json:
        click.echo(json.dumps(d.as_dict(), ensure_ascii=False, indent=1))
    else:
        click.echo(d.markdown())


__all__ = ["decide"]
