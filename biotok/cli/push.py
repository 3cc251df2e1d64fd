"""``biotok push FOLDER REPO`` (also ``biotok-train push``) and the ``--push-to-hub REPO`` option of
the commands that write a tokenizer or a model: a few lines over :mod:`biotok.hub`.

Both, because both habits exist: ``--push-to-hub`` as ``transformers.Trainer`` scripts take it
(checked before any work: the repository name and a token), and a ``push`` command as ``hf upload``
for any output folder afterwards, e.g. from a login node when the job ran where there is no network.
"""

from __future__ import annotations

from pathlib import Path

import click


def _check(ctx: click.Context, param: click.Parameter, repo: str | None) -> str | None:
    """--push-to-hub is refused at the door (bad name, no token), not after hours of training."""
    if repo is not None:
        from biotok.hub import check_push  # lazy: huggingface_hub only when --push-to-hub is given

        check_push(repo)
    return repo


push_to_hub_option = click.option(
    "--push-to-hub", "push_to_hub", metavar="REPO", default=None, callback=_check,
    help="When done, publish the output folder to this Hugging Face Hub repository (owner/name; "
         "created if needed; a token from `hf auth login` or HF_TOKEN; HF_ENDPOINT for another Hub; "
         "BIOTOK_HUB_TIMEOUT seconds per Hub answer, default 30).",
)


def push_and_say(folder: str | Path, repo: str | None) -> None:
    """Push ``folder`` to ``repo`` (no-op without one) and print where it went."""
    if repo is None:
        return
    from biotok.hub import push_folder  # lazy: huggingface_hub only when pushing

    pushed = push_folder(folder, repo)
    click.echo(f"pushed {len(pushed.files)} files of {folder} to {pushed.url} (commit {pushed.commit[:12]})")


@click.command("push")
@click.argument("folder", type=click.Path(path_type=Path))
@click.argument("repo")
@click.option("--private", is_flag=True, default=None, help="Make a new repository private.")
@click.option("--message", "-m", default=None, help="Commit message [Upload FOLDER with biotok].")
def push(folder: Path, repo: str, private: bool | None, message: str | None) -> None:
    """Publish an output FOLDER (a tokenizer, a pretraining run, a fine-tuned or transferred model)
    to the Hugging Face Hub repository REPO, in one commit.

    The training state (checkpoint/) and hidden files stay here; the model card's usage snippet
    is rewritten to load REPO. A token comes from `hf auth login` or HF_TOKEN. Each Hub call waits
    at most BIOTOK_HUB_TIMEOUT seconds (default 30) for an answer, then says so; the folder is
    only read.

    \b
    Example:  biotok push runs/bert-tiny me/bert-tiny-fr-bio --private
    """
    from biotok.hub import push_folder  # lazy: huggingface_hub only when pushing

    pushed = push_folder(folder, repo, private=private, message=message, given_as="REPO")
    click.echo(f"pushed {len(pushed.files)} files of {folder} to {pushed.url} (commit {pushed.commit[:12]})")


__all__ = ["push", "push_and_say", "push_to_hub_option"]
