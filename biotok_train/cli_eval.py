"""``biotok-train ner | eval-mlm | fill-mask | ablate``: thin wrappers over the Python API.

torch and transformers are imported inside the commands, so ``--help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path

import click

from biotok.errors import ConfigError


class GreedyOption(click.Option):
    """A ``multiple`` option that also takes the values after it, up to the next option:
    ``--tokenizers A B C --seeds 0 1`` (as well as ``--tokenizers A --tokenizers B``)."""

    def add_to_parser(self, parser, ctx) -> None:
        super().add_to_parser(parser, ctx)
        for name in self.opts:
            opt = parser._long_opt.get(name) or parser._short_opt.get(name)
            if opt is None:
                continue
            previous = opt.process

            def process(value, state, previous=previous) -> None:
                previous(value, state)
                while state.rargs and not state.rargs[0].startswith("-"):
                    previous(state.rargs.pop(0), state)
                # a negative number ('--seeds -1') would be read as an option: not supported

            opt.process = process


def _finetune_options(f):
    """--epochs --lr --seed --batch-size --max-steps, shared by ner and classify."""
    for opt in reversed([
        click.option("--epochs", type=click.IntRange(min=1), default=3, show_default=True),
        click.option("--lr", type=click.FloatRange(min=0, min_open=True), default=5e-5, show_default=True),
        click.option("--seed", type=int, default=0, show_default=True),
        click.option("--batch-size", type=click.IntRange(min=1), default=16, show_default=True),
        click.option("--max-steps", type=click.IntRange(min=0), default=0, show_default=True, help="0: no cap."),
    ]):
        f = opt(f)
    return f


def _data_dir_option(f):
    return click.option(
        "--data-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
        help="Folder of the shared corpora [default: $BIOTOK_DATA_DIR, else ../shared/data/corpora].",
    )(f)


@click.command("ner")
@click.argument("model")
@click.option("--data", required=True, metavar="NAME|PATH",
              help="quaero, quaero-medline, quaero-emea, mantra-fr, e3c, ncbi, bc5cdr, bc2gm, or a BIO file/folder.")
@_data_dir_option
@_finetune_options
@click.option("--max-length", type=click.IntRange(min=8), default=256, show_default=True, help="Pieces per chunk.")
@click.option("--patience", type=click.IntRange(min=1), default=2, show_default=True, help="Early stopping on dev micro-F1.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write results.json and test_predictions.tsv here.")
@click.option("--quiet", "-q", is_flag=True)
def ner(model, data, data_dir, epochs, lr, seed, batch_size, max_steps, max_length, patience, out, quiet) -> None:
    """Fine-tune MODEL for NER and score test with seqeval (entity level, strict IOB2)."""
    from biotok_train.finetune import NerConfig, finetune_ner, format_report, load_model_tokenizer
    from biotok_train.readers import load_dataset

    cfg = NerConfig(epochs=epochs, lr=lr, seed=seed, batch_size=batch_size, max_steps=max_steps,
                    max_length=max_length, patience=patience)
    ds = load_dataset(data, data_dir)
    load_model_tokenizer(model)  # fail before any output when the model is not there
    if not quiet:
        click.echo(f"{ds.name}: {len(ds.train)} train / {len(ds.dev)} dev / {len(ds.test)} test sentences, "
                   f"{len(ds.types)} types", err=True)
    result = finetune_ner(model, ds, cfg, out, progress=not quiet)
    click.echo(format_report(result))
    if out is not None:
        click.echo(f"wrote {out / 'results.json'}", err=True)


@click.command("classify")
@click.argument("model")
@click.option("--data", default="frenchmedmcqa-nbr", show_default=True, metavar="NAME",
              help="frenchmedmcqa-nbr: number of correct answers (1-5) of a FrenchMedMCQA question.")
@_data_dir_option
@_finetune_options
@click.option("--max-length", type=click.IntRange(min=8), default=256, show_default=True)
@click.option("--patience", type=click.IntRange(min=1), default=2, show_default=True)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None)
@click.option("--quiet", "-q", is_flag=True)
def classify(model, data, data_dir, epochs, lr, seed, batch_size, max_steps, max_length, patience, out, quiet) -> None:
    """Fine-tune MODEL on a sentence-level classification task: accuracy and macro-F1 on test."""
    from biotok_train.finetune import NerConfig, finetune_cls, format_cls_report, load_model_tokenizer
    from biotok_train.readers import load_cls_dataset

    cfg = NerConfig(epochs=epochs, lr=lr, seed=seed, batch_size=batch_size, max_steps=max_steps,
                    max_length=max_length, patience=patience)
    ds = load_cls_dataset(data, data_dir)
    load_model_tokenizer(model)
    result = finetune_cls(model, ds, cfg, out, progress=not quiet)
    click.echo(format_cls_report(result))


@click.command("eval-mlm")
@click.argument("model")
@click.option("--corpus", "corpus", multiple=True, required=True, help="Text file(s), .gz/.xz, .jsonl (repeatable).")
@click.option("--field", "field_name", default=None, metavar="NAME", help="JSON field of .jsonl inputs.")
@click.option("--n-words", type=click.IntRange(min=1), default=1000, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Picks the words (not the model).")
@click.option("--batch-size", type=click.IntRange(min=1), default=32, show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Results JSON.")
def eval_mlm_cmd(model, corpus, field_name, n_words, seed, batch_size, out) -> None:
    """Masked whole-word accuracy top-1/3/5 of MODEL on words sampled from --corpus."""
    from biotok_train.evaluate import eval_mlm, format_mlm

    result = eval_mlm(model, list(corpus), n_words, seed, field_name=field_name, out=out, batch_size=batch_size)
    click.echo(format_mlm(result))


@click.command("fill-mask")
@click.argument("model")
@click.argument("text", required=False)
@click.option("--top-k", "-k", type=click.IntRange(min=1), default=5, show_default=True)
@click.option("--cloze", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Score a cloze TSV (e.g. corpora/cloze/fr_medical_cloze.tsv) instead of TEXT.")
def fill_mask_cmd(model, text, top_k, cloze) -> None:
    """Top-k fillers for each <mask> (or [MASK]) in TEXT, or whole-word accuracy on --cloze."""
    from biotok_train.evaluate import format_mlm, load_mlm
    from biotok_train.fillmask import cloze_accuracy, fill_mask, format_fillers, read_cloze

    if (text is None) == (cloze is None):
        raise ConfigError("give TEXT with a <mask>, or --cloze FILE (one of the two)")
    if cloze is not None:
        read_cloze(cloze)  # validate before loading the model
        model_, tok = load_mlm(model)
        click.echo(format_mlm(cloze_accuracy(model_, tok, cloze, name=model)))
        return
    model_, tok = load_mlm(model)
    click.echo(format_fillers(text, fill_mask(model_, tok, text, top_k)))


@click.command("ablate")
@click.option("--tokenizers", "tokenizers", cls=GreedyOption, multiple=True, required=True,
              help="Tokenizer dirs/files/aliases (repeat, or several after one --tokenizers).")
@click.option("--corpus", "corpus", cls=GreedyOption, multiple=True, required=True, help="Pretraining corpus file(s).")
@click.option("--field", "field_name", default=None, metavar="NAME", help="JSON field of .jsonl inputs.")
@click.option("--task", default="e3c", show_default=True, help="NER dataset name or path (see `ner --data`).")
@_data_dir_option
@click.option("--size", type=click.Choice(["tiny", "small", "base"]), default="tiny", show_default=True)
@click.option("--budget", type=click.IntRange(min=1), default=200, show_default=True, help="Pretraining steps.")
@click.option("--batch-size", type=click.IntRange(min=1), default=32, show_default=True, help="Pretraining batch.")
@click.option("--seq-len", type=click.IntRange(min=8), default=128, show_default=True)
@click.option("--lr", type=click.FloatRange(min=0, min_open=True), default=5e-4, show_default=True, help="Pretraining lr.")
@click.option("--seeds", "seeds", cls=GreedyOption, multiple=True, type=int, default=(0,), show_default=True, help="NER seeds.")
@click.option("--ner-epochs", type=click.IntRange(min=1), default=3, show_default=True)
@click.option("--ner-lr", type=click.FloatRange(min=0, min_open=True), default=5e-5, show_default=True)
@click.option("--ner-max-steps", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--n-words", type=click.IntRange(min=1), default=1000, show_default=True, help="eval-mlm words.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option("--quiet", "-q", is_flag=True)
def ablate_cmd(tokenizers, corpus, field_name, task, data_dir, size, budget, batch_size, seq_len, lr, seeds,
               ner_epochs, ner_lr, ner_max_steps, n_words, out, quiet) -> None:
    """Same recipe, several vocabularies: pretrain + eval-mlm + NER each, one table and one figure.

    Resumable: a finished leg (OUT/legs/NAME/done.json) is not redone.
    """
    from biotok_train.ablate import AblationConfig, run_ablation

    cfg = AblationConfig(
        tokenizers=tuple(tokenizers), corpus=tuple(corpus), field_name=field_name, task=task,
        data_dir=str(data_dir) if data_dir else None, size=size, budget=budget, batch_size=batch_size,
        seq_len=seq_len, lr=lr, seeds=tuple(seeds), ner_epochs=ner_epochs, ner_lr=ner_lr,
        ner_max_steps=ner_max_steps, n_words=n_words,
    )
    table = run_ablation(cfg, out, progress=not quiet)
    click.echo(table.markdown)
    click.echo(f"wrote {table.markdown_path} and {table.png_path}", err=True)


def register(group: click.Group) -> None:
    for cmd in (ner, classify, eval_mlm_cmd, fill_mask_cmd, ablate_cmd):
        group.add_command(cmd)

