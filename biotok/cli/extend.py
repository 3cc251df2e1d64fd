"""``biotok extend``: a few lines over :func:`biotok.extension.extend`."""

from __future__ import annotations

from pathlib import Path

import click

from biotok.cli.options import default_of, force_option, quiet_option
from biotok.cli.train import workers_option
from biotok.errors import ConfigError
from biotok.extension import AUTO, ExtendConfig, extend as extend_tokenizer


def _add(value: str) -> int | str:
    if value.strip().lower() == AUTO:
        return AUTO
    try:
        return int(value.replace(",", "").replace("_", ""))
    except ValueError:
        raise ConfigError(f"--add must be a number of pieces or 'auto', not {value!r}") from None


def _target(value: str | None) -> float | None:
    if value is None:
        return None
    v = value.strip()
    try:
        return float(v[:-1]) / 100 if v.endswith("%") else float(v)
    except ValueError:
        raise ConfigError(f"--target must be a share of fewer pieces such as 20% or 0.2, not {value!r}") from None


@click.command("extend")
@click.argument("base", metavar="BASE")
@click.argument("corpus", nargs=-1, required=True, metavar="CORPUS...")
@click.option("--add", "add", default=str(default_of(ExtendConfig, "add")), show_default=True, metavar="K|auto",
              help="Pieces to add, or 'auto': stop where one more piece saves under --flat of the base's pieces.")
@click.option("--target", default=None, metavar="PCT",
              help="Instead of --add: stop once the corpus takes this many fewer pieces (20%), or where the "
              "savings flatten first.")
@click.option("--flat", type=float, default=default_of(ExtendConfig, "flat"), show_default=True,
              help="auto/--target: the share of the base's pieces below which one more piece is not worth it.")
@click.option("--max-run", type=click.IntRange(min=2), default=default_of(ExtendConfig, "max_run"),
              show_default=True, help="Most base pieces one new piece joins.")
@click.option("--min-count", type=click.IntRange(min=1), default=default_of(ExtendConfig, "min_count"),
              show_default=True, help="Fewest occurrences on the corpus of a candidate piece.")
@click.option("--strict/--no-strict", default=default_of(ExtendConfig, "strict"), show_default=True,
              help="WordPiece: --strict keeps only pieces proven never to lengthen any text; --no-strict: "
              "checked on the corpus's words only: more pieces, no proof for other text (Unigram and BPE "
              "are always proven).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="Output directory.")
@workers_option
@force_option
@quiet_option
def extend(base, corpus, add, target, flat, max_run, min_count, strict, out, workers, force, quiet) -> None:
    """Add a domain's pieces to BASE (a tokenizer folder, file or alias), learned from CORPUS.

    The pieces go into the base's own model (WordPiece entries, BPE merges after the base's,
    Unigram pieces with scores, in spm.model too), never as added tokens; every base token keeps
    its id and the new ids follow, so a pretrained model keeps its rows
    (`biotok-train transfer MODEL --tokenizer OUT`). They are chosen by the pieces they save
    on CORPUS, recounted after each choice, and no text gets more pieces than with BASE nor
    decodes differently (see docs/extend.md: the guarantee; WordPiece with --no-strict: only
    the words of CORPUS are checked).

    \b
      biotok extend camembertv2 corpus.txt --add 2000 --out camembertv2-bio/
      biotok extend camemberta corpus.txt --target 20% --out camemberta-bio/
      biotok compare camembertv2 camembertv2-bio/ --corpus held_out.txt
    """
    cfg = ExtendConfig(add=None if target is not None else _add(add), target=_target(target), flat=flat,
                       max_run=max_run, min_count=min_count, strict=strict)
    result = extend_tokenizer(base, list(corpus), out, cfg, force=force, progress=not quiet, workers=workers)
    click.echo(result.summary())


__all__ = ["extend"]
