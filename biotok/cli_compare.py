"""``biotok compare`` and ``biotok report``: vocabulary diff, fragmentation, term tables, figures."""

from __future__ import annotations

import json
import math
import sys
from itertools import combinations
from pathlib import Path
from typing import Any, Sequence

import click

from biotok.errors import ConfigError, CorpusError

_TOKS_HELP = (
    "Tokenizers: paths (artifact or HF dir, tokenizer.json[.gz], *.model, vocab.txt, "
    "vocab.json) or aliases (alibert, camembert, camembert-bio, camemberta, camembertv2, drbert, "
    "flaubert, barthez, bert, bert-cased, scibert, pubmedbert, biobert)."
)


def register(group: click.Group) -> None:
    """Add ``compare`` and ``report`` to the biotok command group."""
    # imported here, not at module level: `python -m biotok.cli` runs cli.py as __main__ and
    # would otherwise import biotok.cli a second time in the middle of this module's import
    from biotok.cli import corpus_options

    for cmd in (compare, report):
        if not any(p.name == "field_name" for p in cmd.params):
            corpus_options(cmd)  # click appends the option to an existing command
        group.add_command(cmd)


def _tokenizer_options(f):
    f = click.option(
        "--tokenizers-dir",
        type=click.Path(file_okay=False, path_type=Path),
        envvar="BIOTOK_TOKENIZERS_DIR",
        default=None,
        help="Local folder of tokenizers: alias X is looked up in DIR/<X's folder> before the Hub "
        "(e.g. camemberta -> DIR/camemberta-base). Env: BIOTOK_TOKENIZERS_DIR.",
    )(f)
    f = click.option(
        "--lower/--cased",
        "lowercase",
        default=None,
        help="Force lowercasing for vocab.txt / vocab.json tokenizers (default: decided by the vocab).",
    )(f)
    return f


def _load_all(names: Sequence[str], tokenizers_dir: Path | None, lowercase: bool | None):
    from biotok.tokenizer import load

    toks = [load(n, tokenizers_dir=tokenizers_dir, lowercase=lowercase) for n in names]
    seen: dict[str, int] = {}
    for t in toks:  # two paths with the same folder name: keep names distinct in tables
        if t.name in seen:
            seen[t.name] += 1
            t.name = f"{t.name}#{seen[t.name]}"
        else:
            seen[t.name] = 1
    return toks


def _clean(obj: Any) -> Any:
    """JSON-safe copy: NaN/inf -> null, tuples -> lists, int keys -> str."""
    if isinstance(obj, float):
        return None if math.isnan(obj) or math.isinf(obj) else obj
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def _show(piece: str) -> str:
    """A piece as printed: quoted when it holds whitespace or is not printable (e.g. '\n')."""
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


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("tokenizers", nargs=-1, required=True, metavar="TOKENIZER...")
@click.option("--corpus", "corpus", multiple=True, metavar="PATH",
              help="Measure fragmentation on this corpus (text, .gz/.xz/.bz2, .jsonl, dir, '-'); repeatable.")
@click.option("--terms", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Segment each term of FILE (one per line, optional TAB category), as in the PubMedBERT paper's Table 1.")
@click.option("--max-lines", type=click.IntRange(min=1), default=None, help="Read at most N corpus lines.")
@click.option("--batch-size", type=click.IntRange(min=1), default=2000, show_default=True,
              help="Lines per encode_batch call.")
@click.option("--examples", type=click.IntRange(min=0), default=8, show_default=True,
              help="Example pieces shown per vocabulary set.")
@click.option("--json", "as_json", is_flag=True, help="Print the full result as JSON instead of tables.")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Save a PNG: fertility bars with --corpus, pieces per term with --terms, else vocabulary overlap.")
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when stderr is a terminal).")
@_tokenizer_options
def compare(tokenizers, corpus, field_name, terms, max_lines, batch_size, examples, as_json, plot, progress,
            tokenizers_dir, lowercase):
    """Compare vocabularies, and their fragmentation on a corpus or a term list.

    The first tokenizer is the reference (relative sequence length is against it).

    \b
    Examples:
      biotok compare camemberta camembertv2 barthez --tokenizers-dir ../shared/data/tokenizers
      biotok compare camemberta barthez --corpus clinical_notes.txt.gz --plot frag.png
      biotok compare bert scibert --terms corpora/terms/pubmedbert_table1.txt
      biotok compare tok/ camembert --corpus held_out.jsonl --field text --json > cmp.json

    \b
    Reading the output (formulas in docs/compare.md):
      fertility       pieces per biotok word (1.0 = every word is one piece)
      split words     share of words cut into 2+ pieces
      rel. length     total pieces / total pieces of the first tokenizer
      duplicates      forms present both with and without the word-start marker
    """
    from biotok.vocab import as_vocab, diff_vocab, duplicate_pairs

    term_pairs = _read_terms_file(terms) if terms is not None else None  # fail fast, before any work
    if plot is not None and not plot.resolve().parent.is_dir():
        raise ConfigError(f"cannot write {plot}: folder {plot.parent} does not exist")
    toks = _load_all(tokenizers, tokenizers_dir, lowercase)
    result: dict[str, Any] = {
        "tokenizers": [
            {"name": t.name, "source": t.source, "marker": t.marker, "vocab_size": t.vocab_size,
             "lowercase": t.lowercase, **({"fingerprint": t.fingerprint} if as_json else {})}
            for t in toks
        ]
    }
    vocabs = [as_vocab(t) for t in toks]
    dup = {v.name: duplicate_pairs(v) for v in vocabs}
    pairs = [diff_vocab(a, b, examples=examples) for a, b in combinations(vocabs, 2)]
    result["vocab"] = {
        "forms": {v.name: len(v.forms) for v in vocabs},
        "duplicates": {n: {"count": len(p), "examples": [list(x) for x in p[:examples]]} for n, p in dup.items()},
        "pairs": [d.as_dict() for d in pairs],
    }
    cmp = None
    if corpus:
        from biotok.corpus import iter_lines
        from biotok.metrics import compare as run_compare

        show = sys.stderr.isatty() if progress is None else progress
        cmp = run_compare(toks, iter_lines(list(corpus), field_name), batch_size=batch_size,
                          progress=show, max_lines=max_lines)
        if cmp.results[0].words == 0:
            raise CorpusError(f"no words in corpus {', '.join(corpus)}")
        result["corpus"] = {"paths": list(corpus), **cmp.as_dict()}
    table = None
    if term_pairs is not None:
        from biotok.metrics import segment_terms

        table = segment_terms(toks, term_pairs)
        result["terms"] = {"path": str(terms), **table.as_dict()}
    if plot is not None:
        _plot(plot, toks, vocabs, cmp, table)
        result["plot"] = str(plot)
    if as_json:
        click.echo(json.dumps(_clean(result), ensure_ascii=False, indent=2))
        return
    _print_vocab(vocabs, dup, pairs, examples)
    if cmp is not None:
        _print_corpus(cmp, corpus)
    if table is not None:
        _print_terms(table)
    if plot is not None:
        click.echo(f"\nplot written to {plot}")


def _read_terms_file(path: Path) -> list[tuple[str, str]]:
    from biotok.metrics import read_terms

    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise CorpusError(f"terms file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise CorpusError(f"cannot read terms file {path}: {e}") from None
    pairs = read_terms(lines)
    if not pairs:
        raise CorpusError(f"terms file {path} has no term")
    return pairs


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


def _plot(path: Path, toks, vocabs, cmp, table) -> None:
    from biotok import report as rep

    if cmp is not None:
        rep.plot_fertility(cmp, path)
    elif table is not None:
        plt = rep._plt()
        names = list(table.names)
        vals = [table.mean_pieces(i) for i in range(len(names))]
        fig, ax = plt.subplots(figsize=(max(6, 1.5 * len(names) + 3), 4))
        bars = ax.bar(names, vals, color=[f"C{i}" for i in range(len(names))])
        ax.bar_label(bars, fmt="%.2f", padding=2)
        ax.set_ylim(0, max(vals) * 1.15 if vals and max(vals) > 0 else 1)
        ax.set_title(f"Mean pieces per term ({len(table.rows)} terms)")
        ax.set_xlabel("tokenizer")
        ax.set_ylabel("pieces per term")
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
    else:
        rep.plot_overlap(vocabs, path)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("tokenizers", nargs=-1, required=True, metavar="TOKENIZER...")
@click.option("--corpus", "corpus", multiple=True, required=True, metavar="PATH",
              help="Corpus to measure on (text, .gz/.xz/.bz2, .jsonl, dir, '-'); repeatable.")
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Output folder (report.md + PNGs).")
@click.option("--force", is_flag=True, help="Replace an existing --out folder.")
@click.option("--max-lines", type=click.IntRange(min=1), default=None, help="Read at most N corpus lines.")
@click.option("--batch-size", type=click.IntRange(min=1), default=2000, show_default=True)
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when a terminal).")
@_tokenizer_options
def report(tokenizers, corpus, field_name, out, force, max_lines, batch_size, progress, tokenizers_dir, lowercase):
    """Write report.md and figures comparing tokenizers on a corpus.

    \b
    Figures: fertility.png, pieces_per_word.png, sequence_length.png,
    vocab_overlap.png (pairwise Jaccard), piece_length.png.

    \b
    Examples:
      biotok report camemberta camembertv2 barthez --corpus notes.txt --out report/
      biotok report tok/ drbert --corpus held_out.jsonl --field text --out rep/ --force
    """
    from biotok.corpus import iter_lines
    from biotok.report import build_report

    if out.exists() and not force:
        from biotok.errors import OutputExistsError

        raise OutputExistsError(f"{out} exists; pass --force to replace it")
    toks = _load_all(tokenizers, tokenizers_dir, lowercase)
    show = sys.stderr.isatty() if progress is None else progress
    rep = build_report(toks, iter_lines(list(corpus), field_name), out, force=force,
                       corpus_label=", ".join(corpus), batch_size=batch_size, progress=show, max_lines=max_lines)
    click.echo(f"report written to {rep.markdown} ({len(rep.figures)} figures)")
