"""``python -m biotok_train`` (what torchrun and accelerate launch run)."""

from biotok_train.cli import main

main()
