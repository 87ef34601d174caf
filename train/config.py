"""What a `garfish train` run needs: its configuration, filled in by the command line (cli.py) and read by
the training run (trainer.py), and the command's name for its messages."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from garfish.engine.evaluation.network import NO_BASE, NO_KING_BUCKETS, SCRELU
from garfish.train.data import Filters

PROG = "garfish train"


@dataclass
class TrainConfig:
    """Everything a training run needs, from the command line."""

    files: list[Path]
    output: Path
    hidden: int = 128
    buckets: int = 1
    activation: int = SCRELU
    qa: int = 255
    qb: int = 64
    scale: int = 400
    base: int = NO_BASE
    layout: int = NO_KING_BUCKETS  # the input layout (engine.evaluation.network.LAYOUTS)
    lam: float = 0.75
    k: float = 400.0
    eval_k: Optional[float] = None  # the evaluation's sigmoid scale; None: K, or with a base the base's fitted K'
    epochs: int = 10
    batch_size: int = 4096
    lr: float = 1e-3
    lr_final: float = 1e-5
    optimizer: str = "adamw"
    weight_decay: float = 0.01
    bucket_decay: Optional[float] = None  # AdamW's decay of the king buckets' own W1 rows (None: weight_decay)
    seed: int = 1
    val_fraction: float = 0.05
    val_seed: int = 0
    threads: int = 1
    filters: Filters = field(default_factory=Filters)
    mirror: bool = False
    syzygy: Optional[Path] = None  # games reaching these Syzygy tables take their result (data.tablebase_results)
    cache: Optional[Path] = None
    checkpoint: Optional[Path] = None
    resume: Optional[Path] = None
    merge: list[Path] = field(default_factory=list)
    measure: list[Path] = field(default_factory=list)  # network files to measure, nothing trained
    baseline: bool = False
    command: str = PROG
