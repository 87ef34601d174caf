"""`garfish train FILE|FOLDER ...`: train an evaluation network (engine/evaluation/network.py) on labelled positions.

Input: files of `FEN;SCORE;BEST;RESULT` lines (gzip or plain, or packed as games by garfish pack;
a folder stands for its *.txt, *.txt.gz and *.gfpk files), such as the Stockfish 15.1 self-play
positions in ../shared/data/train.
Positions in check, those whose BEST is a capture or a promotion, and those with |SCORE| above
--max-score are dropped; --val-fraction of the games (a seeded choice) are held out for validation.
With --syzygy DIR, a game that reaches DIR's tables takes their result (the WDL of its first
position in them, just after a capture), every position of it: Stockfish at 1,000 nodes a move
draws many endings the tables win (2% of the games of a 1,000-node seed, 4.5% of its positions).

The target, from the side to move's view, is lambda * sigmoid(score / K) + (1 - lambda) * result,
and the loss the mean squared error between sigmoid(evaluation / K) and it. Training is seeded:
the same data, options and --threads give the same network, byte for byte.

Output, in --output: the network nn-<hash>.gfnn (its description names the data, the command,
the seed and the losses), its loss curve nn-<hash>.png and its float checkpoint nn-<hash>.pt
(`--resume` continues from it, or from the checkpoint written after every epoch).

`--merge A.pt B.pt ...` trains nothing: it averages networks trained alike (other seeds) into one,
their accumulators side by side and its output the mean of theirs (an ensemble in one network:
it evaluates as one network of their total H), and reports its loss on the data's validation
positions. In integers it is exact: QB becomes N times the members' QB, so every member keeps
its quantized weights.

`--measure NET.gfnn ...` trains nothing either: it measures network files (any shape, layout or
base) on the data's validation positions, as a run measures its own quantized network: the loss
at the run's scale (with --base classic, the base's best fit on the training positions) and at
the network's own best K'. Networks made on other data can so be compared on the same positions;
with `--val-fraction 1` every game of the files is measured (a held-out file that no network was
trained on), and the run's scale is the base's best fit on them.

Needs PyTorch: pip install torch==2.13.0, then pip install -e .[train] (in the project folder).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Optional

from garfish.engine.evaluation.network import BASES, CRELU, KING_BUCKETS_4, MAX_BUCKETS, MAX_HIDDEN, NO_KING_BUCKETS, SCRELU
from garfish.train.config import PROG, TrainConfig
from garfish.train.data import Filters, default_cache

ACTIVATION_NAMES = {"screlu": SCRELU, "crelu": CRELU}
DATA_SUFFIXES = (".txt", ".txt.gz", ".gfpk")
INSTALL_HINT = ("garfish train needs PyTorch and matplotlib, which are not installed here. Install them into "
                "Garfish's environment with\n    pip install torch==2.13.0\n    pip install -e .[train]\n"
                "(in the project folder; torch first, so that pip takes that CPU build and not a newer CUDA one).")


def build_parser() -> argparse.ArgumentParser:
    """The command line's options."""
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", nargs="+", type=Path, metavar="FILE|FOLDER", help="training data")
    parser.add_argument("-o", "--output", type=Path, default=Path("nets"), help="output folder (default: nets)")
    net = parser.add_argument_group("network")
    net.add_argument("--hidden", type=int, default=128, help="accumulator size H per side (default 128)")
    net.add_argument("--activation", choices=sorted(ACTIVATION_NAMES), default="screlu", help="default screlu")
    net.add_argument("--buckets", type=int, default=1, help="output buckets by piece count (default 1)")
    net.add_argument("--king-buckets", action="store_true",
                     help="inputs in 4 buckets of the own king's square, the board mirrored when the king is "
                          "on the e-h files (3,072 inputs per side; default: the plain 768)")
    net.add_argument("--qa", type=int, default=255, help="quantization of the accumulator (default 255)")
    net.add_argument("--qb", type=int, default=64, help="quantization of the output weights (default 64)")
    net.add_argument("--scale", type=int, default=400, help="centipawns per output unit (default 400)")
    net.add_argument("--base", choices=sorted(BASES.values()), default="none",
                     help="what the network's output is added to: classic, the hand-written evaluation, so that "
                          "the network learns a correction to it on its scale; none (default)")
    loss = parser.add_argument_group("loss and optimizer")
    loss.add_argument("--lambda", dest="lam", type=float, default=0.75,
                      help="weight of the score against the game result in the target (default 0.75)")
    loss.add_argument("--k", type=float, default=400.0,
                      help="sigmoid scale K of the SCORE in the target, in centipawns (default 400)")
    loss.add_argument("--eval-k", type=float, default=None,
                      help="sigmoid scale of the evaluation being trained (default: K; with --base classic, the "
                           "scale that best fits the hand-written evaluation to the training targets)")
    loss.add_argument("--epochs", type=int, default=10, help="passes over the training data (default 10)")
    loss.add_argument("--batch-size", type=int, default=4096, help="positions per step (default 4096)")
    loss.add_argument("--lr", type=float, default=1e-3, help="learning rate at the start (default 0.001)")
    loss.add_argument("--lr-final", type=float, default=1e-5,
                      help="learning rate at the end, reached by a cosine decay over all steps (default 1e-5)")
    loss.add_argument("--optimizer", choices=("adamw", "adam"), default="adamw", help="default adamw")
    loss.add_argument("--weight-decay", type=float, default=0.01, help="AdamW's weight decay (default 0.01)")
    loss.add_argument("--bucket-decay", type=float, default=None,
                      help="AdamW's weight decay of the king buckets' own W1 rows, to hold them near the shared "
                           "factor (default: --weight-decay)")
    loss.add_argument("--seed", type=int, default=1, help="seed of the initial weights and the shuffles (default 1)")
    loss.add_argument("--threads", type=int, default=1, help="PyTorch threads (default 1)")
    data = parser.add_argument_group("data")
    data.add_argument("--max-score", type=int, default=3000,
                      help="drop positions with |SCORE| above this many centipawns; 0 keeps all (default 3000)")
    data.add_argument("--keep-checks", action="store_true", help="keep positions whose side to move is in check")
    data.add_argument("--keep-noisy", action="store_true", help="keep positions whose BEST is a capture or promotion")
    data.add_argument("--mirror", action="store_true",
                      help="also train on the file mirror (a-h) of every training position in which no side can castle")
    data.add_argument("--syzygy", type=Path, default=None, metavar="DIR",
                      help="a game that reaches these Syzygy tables takes their result, from its first position "
                           "there (a win the fifty-move rule turns into a draw is a draw): Stockfish at 1,000 "
                           "nodes a move draws many endings the tables win")
    data.add_argument("--val-fraction", type=float, default=0.05,
                      help="share of the games held out for validation (default 0.05; 1 with --measure: "
                           "every game measured)")
    data.add_argument("--val-seed", type=int, default=0, help="seed of the choice of validation games (default 0)")
    data.add_argument("--cache", type=Path, default=None,
                      help=f"folder of the parsed-data cache (default {default_cache()})")
    data.add_argument("--no-cache", action="store_true", help="parse the files without reading or writing a cache")
    run = parser.add_argument_group("run")
    run.add_argument("--checkpoint", type=Path, default=None,
                     help="checkpoint written after every epoch (default OUTPUT/checkpoint.pt)")
    run.add_argument("--resume", type=Path, default=None, metavar="CHECKPOINT",
                     help="continue from a checkpoint (.pt) up to --epochs; the network options must match it")
    run.add_argument("--merge", type=Path, nargs="+", default=[], metavar="CHECKPOINT",
                     help="train nothing: average the networks of these checkpoints (.pt, the same options, "
                          "e.g. other seeds) into one whose accumulators are theirs side by side, and measure it "
                          "on the data's validation positions")
    run.add_argument("--measure", type=Path, nargs="+", default=[], metavar="NETWORK",
                     help="train nothing: measure network files (.gfnn) on the data's validation positions")
    run.add_argument("--baseline", action="store_true",
                     help="also measure the hand-written evaluation on the validation positions (its best K)")
    return parser


def data_files(paths: list[Path]) -> list[Path]:
    """The files named, a folder standing for its *.txt, *.txt.gz and *.gfpk files (sorted)."""
    files = []
    for path in paths:
        if path.is_dir():
            files += sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(DATA_SUFFIXES))
        else:
            files.append(path)
    return files


def same_data_twice(files: list[Path]) -> str:
    """Files of one folder whose names differ only after their first dot (seed5.txt.gz and
    seed5.gfpk, a file and its pack), or ""."""
    seen: dict[tuple[Path, str], Path] = {}
    for path in files:
        key = (path.parent, path.name.split(".")[0])
        if key in seen and seen[key] != path:
            return f"'{seen[key]}' and '{path}'"
        seen.setdefault(key, path)
    return ""


def usable_cache(folder: Path) -> Optional[Path]:
    """The cache folder, made if need be, or None (said on stderr) when no file can be written there:
    the data is then read without a cache, as with --no-cache."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        print(f"{PROG}: cannot write the cache in {folder} ({error.strerror or error}): reading the data "
              f"without it", file=sys.stderr)
        return None
    return folder


def config_from(args: argparse.Namespace, argv: list[str]) -> tuple[Optional[TrainConfig], str]:
    """The run's configuration, or None and what is wrong with the options."""
    checks = [
        (1 <= args.hidden <= MAX_HIDDEN, f"--hidden must be 1-{MAX_HIDDEN}"),
        (1 <= args.buckets <= MAX_BUCKETS, f"--buckets must be 1-{MAX_BUCKETS}"),
        (all(0 < v <= 65535 for v in (args.qa, args.qb, args.scale)), "--qa, --qb and --scale must be 1-65535"),
        (0.0 <= args.lam <= 1.0, "--lambda must be within 0-1"),
        (args.k > 0 and (args.eval_k is None or args.eval_k > 0), "--k and --eval-k must be positive"),
        (args.epochs >= 1 and args.batch_size >= 1 and args.threads >= 1,
         "--epochs, --batch-size and --threads must be positive"),
        (args.lr > 0 and args.lr_final >= 0 and args.weight_decay >= 0 and (args.bucket_decay or 0) >= 0,
         "learning rates and decay must be positive"),
        (0.0 < args.val_fraction < 1.0 or (args.val_fraction == 1.0 and bool(args.measure)),
         "--val-fraction must be between 0 and 1 (1 only with --measure)"),
        (args.max_score >= 0, "--max-score must be 0 or more"),
        (not (args.merge and args.resume), "--merge and --resume exclude each other"),
        (len(args.merge) != 1, "--merge needs two checkpoints or more"),
        (not (args.measure and (args.merge or args.resume)), "--measure excludes --merge and --resume"),
    ]
    for ok, message in checks:
        if not ok:
            return None, message
    files = data_files(args.data)
    if not files:
        return None, "no data files (a folder stands for its *.txt, *.txt.gz and *.gfpk files)"
    twice = same_data_twice(files)
    if twice:
        return None, f"the same data in two forms? {twice}: name one of them (or move the other away)"
    if args.syzygy is not None and not args.syzygy.is_dir():
        return None, f"--syzygy: not a folder: {args.syzygy}"
    missing = [str(path) for path in files + args.merge + args.measure if not path.is_file()]
    if missing:
        return None, f"not a file: {', '.join(missing)}"
    cache = None if args.no_cache else usable_cache(args.cache or default_cache())
    return TrainConfig(
        files=files, output=args.output, hidden=args.hidden, buckets=args.buckets,
        activation=ACTIVATION_NAMES[args.activation], qa=args.qa, qb=args.qb, scale=args.scale,
        base={name: code for code, name in BASES.items()}[args.base],
        layout=KING_BUCKETS_4 if args.king_buckets else NO_KING_BUCKETS, lam=args.lam, k=args.k,
        eval_k=args.eval_k, epochs=args.epochs, batch_size=args.batch_size, lr=args.lr, lr_final=args.lr_final,
        optimizer=args.optimizer, weight_decay=args.weight_decay,
        bucket_decay=args.bucket_decay, seed=args.seed, val_fraction=args.val_fraction,
        val_seed=args.val_seed, threads=args.threads,
        filters=Filters(args.keep_checks, args.keep_noisy, args.max_score), mirror=args.mirror, syzygy=args.syzygy,
        cache=cache,
        checkpoint=args.checkpoint, resume=args.resume, merge=args.merge, measure=args.measure,
        baseline=args.baseline,
        command=" ".join([PROG] + [shlex.quote(arg) for arg in argv]),
    ), ""


def main(argv: Optional[list[str]] = None) -> int:
    """Entry point of `garfish train`: 0 when the network is written, 2 for bad options or data or
    a missing PyTorch."""
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    config, problem = config_from(args, argv)
    if config is None:
        print(f"{PROG}: {problem}", file=sys.stderr)
        return 2
    try:
        import matplotlib  # noqa: F401  (the loss curve)
        import torch  # noqa: F401
    except ImportError as error:
        print(f"{PROG}: {INSTALL_HINT}\n({error})", file=sys.stderr)
        return 2
    from garfish.train.trainer import run

    return run(config)
