"""``biotok-train transfer``: give a pretrained masked-LM a new vocabulary (a thin layer over
:func:`biotok_train.transfer.transfer_to`)."""

from __future__ import annotations

import click

from biotok.cli.options import default_of, force_option
from biotok.cli.push import push_and_say, push_to_hub_option
from biotok_train.config import TRANSFER_METHODS, TransferConfig


@click.command("transfer")
@click.argument("model", type=click.Path(path_type=str))
@click.option("--tokenizer", "-t", "new_tokenizer", required=True, metavar="NEW",
              help="The new vocabulary: any tokenizer biotok loads (directory, file or alias).")
@click.option("--method", type=click.Choice(TRANSFER_METHODS), default=default_of(TransferConfig, "method"), show_default=True,
              help="fvt: rows not shared are the mean of the old rows of their old segmentation; "
                   "random: the model's initializer (the control arm).")
@click.option("--seed", type=int, default=default_of(TransferConfig, "seed"), show_default=True,
              help="Seed of the random rows.")
@click.option("--out", required=True, type=click.Path(path_type=str), help="Model directory to write.")
@force_option
@push_to_hub_option
def transfer_cmd(model, new_tokenizer, method, seed, out, force, push_to_hub):
    """Rebuild MODEL's embeddings, tied output layer and MLM bias for the NEW vocabulary.

    MODEL is a Hugging Face masked-LM directory with its tokenizer (BERT, RoBERTa/CamemBERT,
    ALBERT; ELECTRA discriminator with generator/), or a bare encoder (BertModel, RobertaModel,
    a sentence-transformers folder): its masked-LM head is created first. A NEW piece spelled like an old one (same
    form and word-start status) keeps the old row; special tokens map by role; the other rows
    are composed (fvt) or random. The result loads with AutoModelForMaskedLM/AutoTokenizer.

    \b
    Example:  biotok-train transfer runs/general --tokenizer tok-clinical/ --method fvt --out runs/general-fvt
              biotok-train mlm data-clinical/ --init-from runs/general-fvt --steps 300 --out runs/continued
    """
    from biotok_train.transfer import transfer_to

    r = transfer_to(model, new_tokenizer, out, TransferConfig(method=method, seed=seed), force=force)
    c = r.counts
    click.echo(f"{out}: {r.tokenizer.vocab_size:,} rows ({method}, seed {seed}): {c['copied']:,} copied, "
               f"{c['special']:,} special, {c['composed']:,} composed, {c['random']:,} random")
    push_and_say(out, push_to_hub)


COMMANDS = (transfer_cmd,)
