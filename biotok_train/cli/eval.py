"""``biotok-train ner | classify | eval-mlm | fill-mask | ablate``: thin wrappers over the Python API.

torch and transformers are imported inside the commands, so ``--help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path

import click

from biotok.cli.options import default_of
from biotok.errors import ConfigError
from biotok_train.ablate import TRANSFER_METHODS, AblationConfig
from biotok_train.cli.options import (
    GreedyOption, data_dir_option, finetune_config, finetune_options, force_option, param_default, quiet_option,
)
from biotok_train.config import FinetuneConfig
from biotok_train.datasets.registry import CLS_DATASETS, DATASETS
from biotok_train.evaluate.fillmask import fill_mask
from biotok_train.evaluate.masked_words import eval_mlm


def _ab(name: str):
    return default_of(AblationConfig, name)


@click.command("ner")
@click.argument("model")
@click.option("--data", required=True, metavar="NAME|PATH", help=f"{', '.join(DATASETS)}, or a BIO file/folder.")
@data_dir_option
@finetune_options
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write results.json and test_predictions.tsv here.")
@force_option
@quiet_option
def ner(model, data, data_dir, out, force, quiet, **recipe) -> None:
    """Fine-tune MODEL for NER and score test with seqeval (entity level, strict IOB2).

    \b
    Example:  biotok-train ner runs/bert-tiny --data quaero-medline --epochs 3 --out results/ner
    """
    from biotok_train.datasets.registry import load_dataset
    from biotok_train.finetune import finetune, format_result

    result = finetune(model, load_dataset(data, data_dir), finetune_config(**recipe), out, force=force,
                      progress=not quiet)
    click.echo(format_result(result))


@click.command("classify")
@click.argument("model")
@click.option("--data", default=CLS_DATASETS[0], show_default=True, metavar="NAME",
              help="frenchmedmcqa-nbr: number of correct answers (1-5) of a FrenchMedMCQA question.")
@data_dir_option
@finetune_options
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write results.json and test_predictions.tsv here.")
@force_option
@quiet_option
def classify(model, data, data_dir, out, force, quiet, **recipe) -> None:
    """Fine-tune MODEL on a sentence-level classification task: accuracy and macro-F1 on test.

    \b
    Example:  biotok-train classify runs/bert-tiny --data frenchmedmcqa-nbr --out results/mcqa
    """
    from biotok_train.datasets.registry import load_cls_dataset
    from biotok_train.finetune import finetune, format_result

    result = finetune(model, load_cls_dataset(data, data_dir), finetune_config(**recipe), out, force=force,
                      progress=not quiet)
    click.echo(format_result(result))


@click.command("eval-mlm")
@click.argument("model")
@click.option("--corpus", "corpus", multiple=True, required=True, help="Text file(s), .gz/.xz, .jsonl (repeatable).")
@click.option("--field", "field_name", default=None, metavar="NAME", help="JSON field of .jsonl inputs.")
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


def _sizes(ctx, param, value) -> tuple[str, ...]:
    """--sizes tiny,small or --sizes tiny small (or repeated)."""
    return tuple(x for v in value for x in str(v).split(",") if x)


@click.command("ablate")
@click.option("--tokenizers", "tokenizers", cls=GreedyOption, multiple=True, required=True,
              help="Tokenizer dirs/files/aliases; the first is the reference (repeat, or several after one option).")
@click.option("--corpus", "corpus", cls=GreedyOption, multiple=True, required=True, help="Pretraining corpus file(s).")
@click.option("--field", "field_name", default=None, metavar="NAME", help="JSON field of .jsonl inputs.")
@click.option("--task", "tasks", cls=GreedyOption, multiple=True, default=_ab("tasks"), show_default=True,
              help="Fine-tuning task: a registered dataset name or a BIO path (repeatable).")
@data_dir_option
@click.option("--sizes", "--size", "sizes", cls=GreedyOption, multiple=True, default=_ab("sizes"), show_default=True,
              callback=_sizes, help="Model sizes, e.g. tiny,small (Kendall τ of the rankings across them).")
@click.option("--budget", type=int, default=_ab("budget"), show_default=True, help="Pretraining steps of every arm.")
@click.option("--batch-size", type=int, default=_ab("batch_size"), show_default=True, help="Pretraining batch.")
@click.option("--seq-len", type=int, default=_ab("seq_len"), show_default=True, help="Pretraining sequence length.")
@click.option("--lr", type=float, default=_ab("lr"), show_default=True, help="Pretraining lr.")
@click.option("--pretrain-seeds", "pretrain_seeds", cls=GreedyOption, multiple=True, type=int,
              default=_ab("pretrain_seeds"), show_default=True, help="Pretraining seeds (one model each).")
@click.option("--seeds", "seeds", cls=GreedyOption, multiple=True, type=int, default=_ab("seeds"), show_default=True,
              help="Fine-tuning seeds (one run per pretraining seed and task each).")
@click.option("--ft-epochs", "--ner-epochs", "ft_epochs", type=int, default=default_of(FinetuneConfig, "epochs"),
              show_default=True, help="Fine-tuning epochs.")
@click.option("--ft-lr", "--ner-lr", "ft_lr", type=float, default=default_of(FinetuneConfig, "lr"), show_default=True,
              help="Fine-tuning peak lr.")
@click.option("--ft-batch-size", type=int, default=default_of(FinetuneConfig, "batch_size"), show_default=True,
              help="Fine-tuning batch.")
@click.option("--ft-max-steps", "--ner-max-steps", "ft_max_steps", type=int,
              default=default_of(FinetuneConfig, "max_steps"), show_default=True, help="Cap on fine-tuning steps (0: none).")
@click.option("--n-words", type=int, default=_ab("n_words"), show_default=True, help="eval-mlm words.")
@click.option("--no-floor", is_flag=True, help="Skip the random-init floors.")
@click.option("--n-resamples", type=int, default=_ab("n_resamples"), show_default=True, help="Bootstrap resamples.")
@click.option("--arms", "arms", cls=GreedyOption, multiple=True, default=_ab("arms"), show_default=True,
              callback=_sizes, help="How each model starts: scratch, continual, transfer (comma list; the last two need --base).")
@click.option("--base", type=click.Path(path_type=str), default=None, metavar="MODEL_DIR",
              help="A Hugging Face masked LM with its tokenizer: continual continues it, transfer moves it to each "
                   "tokenizer, scratch takes its architecture.")
@click.option("--transfer-method", type=click.Choice(TRANSFER_METHODS), default=_ab("transfer_method"),
              show_default=True, help="How the transfer arm builds the rows of new pieces.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True)
@quiet_option
def ablate_cmd(tokenizers, corpus, field_name, tasks, data_dir, sizes, budget, batch_size, seq_len, lr, pretrain_seeds,
               seeds, ft_epochs, ft_lr, ft_batch_size, ft_max_steps, n_words, no_floor, n_resamples, arms, base,
               transfer_method, out, quiet) -> None:
    """Which vocabulary wins: the same budget for each tokenizer, seeds, floors, intervals, verdicts.

    Per size and tokenizer: pretrain, eval-mlm and fine-tune every --task for each seed pair,
    plus a random-init floor; ablation.md gives mean ± std, paired bootstrap intervals against
    the first tokenizer and a verdict per cell. Resumable: finished parts are reused.

    With --base MODEL_DIR and --arms scratch,continual,transfer (PubMedBERT's Table 9): the
    base continued with its own vocabulary (the reference), and per tokenizer the base moved to
    it and continued, and its architecture trained from scratch with it; all on the same budget.

    \b
    Example:  biotok-train ablate --tokenizers tokA/ tokB/ --corpus corpus.txt --task e3c \\
                --sizes tiny,small --seeds 0 1 --out ablation/
              biotok-train ablate --tokenizers tok-clinical/ --corpus cases.txt --task e3c \\
                --base camembert-base/ --arms scratch,continual,transfer --out table9/
    """
    from biotok_train.ablate import run_ablation

    cfg = AblationConfig(
        tokenizers=tuple(tokenizers), corpus=tuple(corpus), field_name=field_name, tasks=tuple(tasks),
        data_dir=str(data_dir) if data_dir else None, sizes=tuple(sizes), budget=budget, batch_size=batch_size,
        seq_len=seq_len, lr=lr, pretrain_seeds=tuple(pretrain_seeds), seeds=tuple(seeds), n_words=n_words,
        floor=not no_floor, n_resamples=n_resamples, arms=tuple(arms), base=base, transfer_method=transfer_method,
        finetune=FinetuneConfig(epochs=ft_epochs, lr=ft_lr, batch_size=ft_batch_size, max_steps=ft_max_steps),
    )
    report = run_ablation(cfg, out, progress=not quiet)
    click.echo(report.markdown)
    click.echo(f"wrote {report.markdown_path}, {report.json_path} and {report.png_path}", err=True)


COMMANDS = (ner, classify, eval_mlm_cmd, fill_mask_cmd, ablate_cmd)
