"""``biotok compare`` and ``biotok report``: a few lines each over :mod:`biotok.report`.

The tables printed by ``compare`` are drawn here (presentation only); the numbers come from
:func:`biotok.report.compare_tokenizers`.
"""

from __future__ import annotations

import json
import math
import shlex
from pathlib import Path

import click
from click.core import ParameterSource

from biotok.cli.options import (
    batch_size_option,
    data_dir_option,
    field_option,
    force_option,
    max_lines_option,
    progress_lines_option,
    progress_option,
    tokenizer_options,
)
from biotok.config import EXAMPLES
from biotok.corpus import iter_lines
from biotok.errors import CorpusError
from biotok.formats import load_many
from biotok.output import check_png, check_writable, check_writable_file


_terms_option = click.option(
    "--terms", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="Segment each term of FILE (one per line, optional TAB category), as in the PubMedBERT paper's Table 1 "
         "(report: on the page and in report.md).")


def _evidence_options(f):
    """--entities, --terminology, --data-dir: the biomedical evidence (docs/compare.md)."""
    f = data_dir_option(f)
    f = click.option("--terminology", metavar="cim10|atc|FILE", default=None,
                     help="Terminology coverage (words kept whole, pieces per term, by category) and morpheme "
                          "alignment on its words: cim10 (42,886 labels), atc (drug names) or a term file.")(f)
    f = click.option("--entities", metavar="DATASET|PATH", default=None,
                     help="Entity-aware fragmentation on gold NER mentions: quaero, quaero-medline, quaero-emea, "
                          "mantra-fr, e3c, ncbi, bc5cdr, bc2gm, a BRAT folder or a BIO file.")(f)
    return f


def _command_line(ctx: click.Context) -> str:
    """The command as typed, rebuilt from its parameters (options left at their default omitted)."""
    words = ["biotok", *ctx.command_path.split()[1:]]
    for p in ctx.command.params:
        v = ctx.params.get(p.name)
        if isinstance(p, click.Argument):
            words += [str(x) for x in (v if isinstance(v, (list, tuple)) else [v])]
        elif (isinstance(p, click.Option) and v is not None and v != p.get_default(ctx)
              and ctx.get_parameter_source(p.name) is not ParameterSource.DEFAULT  # e.g. --progress resolved
              and not (p.multiple and not v)):
            if p.is_flag and p.secondary_opts:
                words.append(p.opts[0] if v else p.secondary_opts[0])
            elif p.is_flag:
                words.append(p.opts[0])
            else:
                for x in (v if p.multiple else [v]):
                    words += [p.opts[0], str(x)]
    return shlex.join(words)


@click.command()
@click.argument("tokenizers", nargs=-1, required=True, metavar="TOKENIZER...")
@click.option("--corpus", "corpus", multiple=True, metavar="PATH",
              help="Measure fragmentation on this corpus (text, .gz/.xz/.bz2, .jsonl, dir, '-'); repeatable.")
@field_option
@_terms_option
@max_lines_option
@batch_size_option
@click.option("--examples", type=click.IntRange(min=0), default=EXAMPLES, show_default=True,
              help="Example pieces shown per vocabulary set.")
@click.option("--json", "as_json", is_flag=True, help="Print the full result as JSON instead of tables.")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Save a PNG: fertility bars with --corpus, pieces per term with --terms, else vocabulary overlap.")
@click.option("--force", is_flag=True, help="Replace the --plot file if it exists.")
@_evidence_options
@click.option("--numbers", is_flag=True, help="How doses, lab values and units are cut (58 built-in cases).")
@progress_option
@tokenizer_options
def compare(tokenizers, corpus, field_name, terms, max_lines, batch_size, examples, as_json, plot, force, entities,
            terminology, data_dir, numbers, progress, tokenizers_dir, lowercase):
    """Compare vocabularies, and their fragmentation on a corpus or a term list.

    The first tokenizer is the reference (relative sequence length is against it).

    \b
    Examples:
      biotok compare camemberta camembertv2 barthez --tokenizers-dir ../shared/data/tokenizers
      biotok compare camemberta barthez --corpus clinical_notes.txt.gz --plot frag.png
      biotok compare bert scibert --terms corpora/terms/pubmedbert_table1.txt
      biotok compare tok/ camembert --corpus held_out.jsonl --field text --json > cmp.json
      biotok compare tok/ camemberta --entities quaero --terminology cim10 --numbers --json > evidence.json

    \b
    Reading the output (formulas in docs/compare.md):
      fertility       pieces per biotok word (1.0 = every word is one piece)
      split words     share of words cut into 2+ pieces
      rel. length     total pieces / total pieces of the first tokenizer
      duplicates      forms present both with and without the word-start marker
    """
    # lazy: numpy and matplotlib (biotok.report, biotok.terminology) stay out of the CLI's start-up
    from biotok.report import compare_tokenizers, plot_comparison
    from biotok.terminology import read_terms_file

    term_pairs = read_terms_file(terms) if terms is not None else None  # fail fast, before any work
    if plot is not None:
        check_png(plot, "--plot")
        check_writable_file(plot, force=force, inputs=[*corpus, *([terms] if terms else [])], parents=False)
    toks = load_many(tokenizers, tokenizers_dir=tokenizers_dir, lowercase=lowercase)
    res = compare_tokenizers(
        toks, lines=iter_lines(list(corpus), field_name) if corpus else None, corpus=corpus,
        terms=term_pairs, terms_path=None if terms is None else str(terms), examples=examples,
        entities=entities, terminology=terminology, numbers=numbers, data_dir=data_dir,
        batch_size=batch_size, progress=progress, max_lines=max_lines,
    )
    if plot is not None:
        plot_comparison(res, plot)
    if as_json:
        click.echo(json.dumps({**res.as_dict(), **({"plot": str(plot)} if plot else {})}, ensure_ascii=False, indent=2))
        return
    _print_result(res, plot)


@click.command()
@click.argument("tokenizers", nargs=-1, required=True, metavar="TOKENIZER...")
@click.option("--corpus", "corpus", multiple=True, required=True, metavar="PATH",
              help="Corpus to measure on (text, .gz/.xz/.bz2, .jsonl, dir, '-'); repeatable.")
@field_option
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="Output folder (report.md, report.html, PNGs).")
@_terms_option
@click.option("--sentences", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also show these sentences (one per line) segmented, after those picked from the corpus.")
@_evidence_options
@click.option("--html/--no-html", default=True, show_default=True,
              help="Also write report.html, the self-contained decision page.")
@click.option("--decide-from", "decide_from", multiple=True, metavar="PATH",
              help="Evidence to decide from (ablate, probe or sweep folders, `compare --json` files), with this "
                   "corpus' fertility: a Decision section at the top of the report (see biotok decide); repeatable.")
@force_option
@max_lines_option
@batch_size_option
@progress_lines_option
@tokenizer_options
@click.pass_context
def report(ctx, tokenizers, corpus, field_name, out, terms, sentences, entities, terminology, data_dir, html,
           decide_from, force, max_lines, batch_size, progress, tokenizers_dir, lowercase):
    """Write report.md, report.html and figures comparing tokenizers on a corpus.

    report.html is one self-contained page (no network): coloured segmentations of sample
    sentences and terms, sortable tables, the figures, the evidence sections and a searchable
    vocabulary diff. Numbers and units are always measured.

    \b
    Figures: fertility.png, pieces_per_word.png, sequence_length.png,
    vocab_overlap.png (pairwise Jaccard), piece_length.png.

    \b
    Examples:
      biotok report camemberta camembertv2 barthez --corpus notes.txt --out report/
      biotok report bert camemberta tok/ --corpus held_out.txt --entities quaero --terminology cim10 --out r/
      biotok report tok/ drbert --corpus held_out.jsonl --field text --terms terms.txt --out rep/ --force
      biotok report tok/ camemberta --corpus held_out.txt --decide-from probe/ --decide-from ablation/ --out r/
    """
    # lazy: numpy and matplotlib (biotok.report, biotok.terminology) stay out of the CLI's start-up
    from biotok.report import build_report
    from biotok.terminology import read_terms_file

    inputs = [*corpus, *(t for t in tokenizers if Path(t).exists()), *decide_from]  # never replaced by --force
    check_writable(out, force, inputs)  # before loading tokenizers (which may download)
    term_pairs = read_terms_file(terms) if terms is not None else None
    given = _read_sentences(sentences) if sentences is not None else []
    toks = load_many(tokenizers, tokenizers_dir=tokenizers_dir, lowercase=lowercase)
    rep = build_report(toks, iter_lines(list(corpus), field_name), out, force=force, inputs=inputs,
                       corpus_label=", ".join(corpus), terms=term_pairs, sentences=given, entities=entities,
                       terminology=terminology, data_dir=data_dir, html=html, command=_command_line(ctx),
                       batch_size=batch_size, progress=progress, max_lines=max_lines, decide_from=decide_from)
    page = f" and {rep.html}" if rep.html else ""
    click.echo(f"report written to {rep.markdown}{page} ({len(rep.figures)} figures)")


def _read_sentences(path: Path) -> list[str]:
    try:
        lines = [l.strip() for l in path.read_text(encoding="utf-8").splitlines() if l.strip()]
    except FileNotFoundError:
        raise CorpusError(f"sentences file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise CorpusError(f"cannot read sentences file {path}: {e}") from None
    if not lines:
        raise CorpusError(f"sentences file {path} has no sentence")
    return lines


# --- tables ----------------------------------------------------------------------------------
def _show(piece: str) -> str:
    """A piece as printed: quoted when it holds whitespace or is not printable (e.g. '\\n')."""
    return repr(piece) if not piece.isprintable() or any(c.isspace() for c in piece) else piece


def _f(x: float, digits: int = 3) -> str:
    return "n/a" if isinstance(x, float) and math.isnan(x) else f"{x:.{digits}f}"


def _table(rows: list[list[str]], right: set[int] | None = None) -> str:
    right = right or set()
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for k, r in enumerate(rows):
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))]
        out.append("  " + "  ".join(cells).rstrip())
        if k == 0:
            out.append("  " + "  ".join("-" * w for w in widths))
    return "\n".join(out)


def _print_result(res, plot: Path | None) -> None:
    _print_vocab(res.vocabs, res.duplicates, res.pairs, res.examples)
    if res.comparison is not None:
        _print_corpus(res.comparison, res.corpus)
    if res.pathologies is not None:
        click.echo("\n" + "\n".join(res.pathologies.markdown()).rstrip())
    if res.terms is not None:
        _print_terms(res.terms)
    if res.evidence is not None:
        click.echo("\n" + "\n".join(res.evidence.markdown()).rstrip())
    if plot is not None:
        click.echo(f"\nplot written to {plot}")


def _print_vocab(vocabs, dup, pairs, examples: int) -> None:
    rows = [["tokenizer", "marker", "entries", "marker-free forms", "duplicates"]]
    for v in vocabs:
        rows.append([v.name, v.marker, f"{v.size:,}", f"{len(v.forms):,}", f"{len(dup[v.name]):,}"])
    click.echo("Vocabularies (duplicates: same form with and without the word-boundary marker)")
    click.echo(_table(rows, right={2, 3, 4}))
    for v in vocabs:
        if dup[v.name] and examples:
            ex = ", ".join(f"{_show(a)}/{_show(b)}" for a, b in dup[v.name][:examples])
            click.echo(f"  {v.name} duplicates e.g.: {ex}")
    if pairs:
        click.echo("\nPairwise overlap of marker-free forms")
        rows = [["pair", "shared", "only first", "only second", "Jaccard"]]
        for d in pairs:
            rows.append([f"{d.name_a} / {d.name_b}", f"{d.shared:,}", f"{d.only_a:,}", f"{d.only_b:,}", f"{d.jaccard:.3f}"])
        click.echo(_table(rows, right={1, 2, 3, 4}))
        if examples:
            for d in pairs:
                click.echo(f"  {d.name_a} / {d.name_b}:")
                click.echo(f"    shared:           {', '.join(map(_show, d.examples_shared))}")
                click.echo(f"    only {d.name_a}: {', '.join(map(_show, d.examples_only_a))}")
                click.echo(f"    only {d.name_b}: {', '.join(map(_show, d.examples_only_b))}")


def _print_corpus(cmp, corpus) -> None:
    r0 = cmp.results[0]
    click.echo(f"\nFragmentation on {', '.join(corpus)}: {r0.lines:,} lines, {r0.words:,} biotok words")
    rows = [["tokenizer", "fertility", "split", "pcs/split", "rel.len", "UNK", "chars/pc", "vocab used", "Renyi2.5", "pieces"]]
    for r, rel in zip(cmp.results, cmp.relative_length):
        rows.append([
            r.name, _f(r.fertility), f"{_f(100 * r.split_share, 1)}%", _f(r.pieces_per_split_word, 2), _f(rel),
            f"{_f(100 * r.unk_rate, 2)}%", _f(r.chars_per_piece, 2), f"{_f(100 * r.utilization, 1)}%",
            _f(r.renyi_efficiency), f"{r.pieces:,}",
        ])
    click.echo(_table(rows, right=set(range(1, 10))))


def _print_terms(table) -> None:
    click.echo("\nTerm segmentation (✓ = one piece, else pieces joined by '-')")
    rows = [["term", "category", *table.names]]
    for r in table.rows:
        rows.append([r.term, r.category, *(r.cell(i) for i in range(len(table.names)))])
    rows.append(["one piece", "", *(f"{100 * table.one_piece_share(i):.0f}%" for i in range(len(table.names)))])
    click.echo(_table(rows))


__all__ = ["compare", "report"]
