"""The training run of `garfish train`: data, epochs, the baseline, the network and its loss curve."""

from __future__ import annotations

import dataclasses
import math
import os
import sys
import time
from pathlib import Path
from typing import Any, Optional

import numpy as np
import torch
from scipy.optimize import minimize_scalar
from tqdm import tqdm

from garfish.engine.evaluation.network import (
    ACTIVATIONS, BASES, CLASSIC_BASE, LAYOUTS, NO_BASE, NO_KING_BUCKETS, Network, NetworkError, read_network,
    write_network,
)
from garfish.engine.services.syzygy import TablebaseError, Tablebases
from garfish.train.config import PROG, TrainConfig
from garfish.train.data import (
    DataError, DataFile, Features, Positions, classic_evaluations, concatenate, could_castle, features, fill, load_file,
    tablebase_results, targets, validation_games,
)
from garfish.train.model import (
    Architecture, Batch, Model, integer_forward, make_batch, merge_models, merge_networks, quantize,
)

EVAL_BATCH = 65536
SCALE_RANGE = (10.0, 10000.0)  # the K' searched for a fitted sigmoid scale, in centipawns
SCALE_TOLERANCE = 1e-6  # ... to this much of log K' (K' to a millionth of itself)


def say(line: str) -> None:
    """Print a line of the run's report and flush."""
    print(line, flush=True)


@dataclasses.dataclass
class Split:
    """One side of the data (training or validation): which positions, each as read or as its file
    mirror, with their targets and base evaluations. The positions are kept once for both sides;
    a batch's inputs are made when it is needed (inputs()), not kept: 40 million positions take
    about 4.5 GB so, where their inputs made in advance would take 20 (train.rows)."""

    positions: Positions  # every position read
    rows: np.ndarray      # int64 [n]: the positions this side uses
    mirror: np.ndarray    # bool [n]: the position's file mirror instead (a and h files swapped)
    target: np.ndarray    # float32 [n]
    base: np.ndarray      # int64 [n]: the base evaluation (zeros without one)
    buckets: int
    layout: int

    def __len__(self) -> int:
        return len(self.target)

    def inputs(self, picked: np.ndarray) -> Features:
        """The network's inputs of the entries `picked` (indices into this side), in that order."""
        made = features(self.positions, self.buckets, NO_BASE, self.layout, self.rows[picked], self.mirror[picked])
        made.base = self.base[picked]
        return made

    def batch(self, picked: np.ndarray) -> Batch:
        """The model's batch of the entries `picked`."""
        return make_batch(self.inputs(picked), np.arange(len(picked)))


def sigmoid_loss(evals: np.ndarray, target: np.ndarray, k: float) -> float:
    """Mean squared error between sigmoid(evals / k) and the targets."""
    predicted = 1.0 / (1.0 + np.exp(-np.asarray(evals, dtype=np.float64) / k))
    return float(np.mean((predicted - target) ** 2))


def fit_scale(evals: np.ndarray, target: np.ndarray) -> tuple[float, float]:
    """The K' at which sigmoid(evals / K') best fits the targets (scipy's bounded Brent search over
    log K' in SCALE_RANGE, to SCALE_TOLERANCE), and its loss."""
    evals = np.asarray(evals, dtype=np.float64)
    low, high = (math.log(v) for v in SCALE_RANGE)
    found = minimize_scalar(lambda log_k: sigmoid_loss(evals, target, math.exp(log_k)), bounds=(low, high),
                            method="bounded", options={"xatol": SCALE_TOLERANCE})
    best = math.exp(float(found.x))
    return best, sigmoid_loss(evals, target, best)


def read_data(config: TrainConfig) -> tuple[list[DataFile], Positions]:
    """Every input file's positions (from the cache when it has them), reported as they come, joined."""
    sources: list[DataFile] = []
    parts: list[Positions] = []
    sizes: list[int] = []
    for path in config.files:
        started = time.perf_counter()
        with tqdm(desc=f"parsing {path.name} (in check)", unit=" positions", disable=None, leave=False,
                  file=sys.stderr) as bar:
            source, positions, cached = load_file(path, config.cache, bar.update)
        how = "from the cache" if cached else "parsed" + (f", cached in {config.cache}" if config.cache else "")
        say(f"{path}: {len(positions):,} positions, {positions.games:,} games ({how}, "
            f"{time.perf_counter() - started:.1f} s)")
        sources.append(source)
        sizes.append(len(positions))
        if config.cache is None:  # nowhere to read it again from
            parts.append(positions)
        del positions
    if config.cache is None:
        return sources, concatenate(parts)
    # Each file read again from the cache into the whole, so that the files are not all held beside it.
    return sources, fill(sizes, (load_file(path, config.cache)[1] for path in config.files))


def table_results(config: TrainConfig, positions: Positions) -> Positions:
    """The positions, with --syzygy the games that reach the tables given their result (data.tablebase_results)."""
    if config.syzygy is None:
        return positions
    try:
        tables = Tablebases(str(config.syzygy))
    except TablebaseError as error:
        raise DataError(f"--syzygy: {error}") from error
    try:
        found = tablebase_results(positions, tables.probe_wdl, tables.max_pieces)
        if tables.failure is not None:
            raise DataError(f"--syzygy: a table failed: {tables.failure.split('; ')[0]}")
    finally:
        tables.close()
    say(f"Syzygy tables ({tables.wdl_count} WDL tables, up to {tables.max_pieces} men): {found.reached:,} games reach "
        f"them; {found.changed:,} of these ({found.changed_positions:,} positions) take the tables' result, "
        f"another than the game's")
    return dataclasses.replace(positions, result=found.result)


def split_data(config: TrainConfig, positions: Positions) -> tuple[Split, Split]:
    """Filter, hold out the validation games, and give each side its rows, targets and base
    evaluations (the training side's file mirrors after its own rows, with --mirror)."""
    keep = config.filters.mask(positions)
    held = np.isin(positions.game, validation_games(positions.games, config.val_fraction, config.val_seed))
    training = np.flatnonzero(keep & ~held)
    mirror = np.zeros(len(training), dtype=np.bool_)
    added = ""
    if config.mirror:
        copies = training[~could_castle(positions)[training]]
        training = np.concatenate([training, copies])
        mirror = np.concatenate([mirror, np.ones(len(copies), dtype=np.bool_)])
        added = f" (with {len(copies):,} file mirrors of those that cannot castle)"
    validation = np.flatnonzero(keep & held)
    sides = []
    for rows, flips in ((training, mirror), (validation, np.zeros(len(validation), dtype=np.bool_))):
        base = (classic_evaluations(positions, rows, flips) if config.base == CLASSIC_BASE
                else np.zeros(len(rows), dtype=np.int64))
        sides.append(Split(positions, rows, flips, targets(positions, config.lam, config.k, rows), base,
                           config.buckets, config.layout))
    train, val = sides
    say(f"{config.filters.describe()}: {int(keep.sum()):,} of {len(positions):,} kept; "
        f"{len(train):,} training{added}, {len(val):,} validation positions "
        f"({config.val_fraction:g} of the games held out, seed {config.val_seed})")
    if not len(val) or not (len(train) or config.measure):
        raise DataError("no training or no validation positions left after the filters and the split")
    return train, val


def predict(model: Model, split: Split) -> np.ndarray:
    """The float model's evaluations (centipawns, side to move) of every position of a split."""
    outputs = []
    with torch.no_grad():
        for start in range(0, len(split), EVAL_BATCH):
            outputs.append(model(split.batch(np.arange(start, min(start + EVAL_BATCH, len(split))))).double().numpy())
    return np.concatenate(outputs) * model.arch.scale


def baseline(config: TrainConfig, val: Split) -> tuple[float, float, float]:
    """The hand-written evaluation on the validation positions: its best K', its loss there, and
    the loss of a constant guess (the mean target), for scale."""
    evals = (val.base if config.base == CLASSIC_BASE
             else classic_evaluations(val.positions, val.rows, val.mirror)).astype(np.float64)
    k, loss = fit_scale(evals, val.target)
    constant = float(np.mean((val.target - val.target.mean()) ** 2))
    say(f"baseline: hand-written evaluation, validation loss {loss:.5f} at its best K' = {k:.0f} "
        f"(at K = {config.k:g}: {sigmoid_loss(evals, val.target, config.k):.5f}); "
        f"a constant guess {constant:.5f}")
    return k, loss, constant


def learning_rate(config: TrainConfig, progress: float) -> float:
    """The cosine decay from --lr to --lr-final; progress runs from 0 to 1 over the run."""
    return config.lr_final + 0.5 * (config.lr - config.lr_final) * (1.0 + math.cos(math.pi * progress))


def bucket_decay_applies(config: TrainConfig, arch: Architecture) -> bool:
    """Whether --bucket-decay gives the king buckets' own rows a decay of their own."""
    return config.optimizer == "adamw" and config.bucket_decay is not None and arch.layout != NO_KING_BUCKETS


def make_optimizer(config: TrainConfig, model: Model) -> torch.optim.Optimizer:
    """AdamW (with its weight decay; --bucket-decay for the king buckets' own rows) or Adam."""
    if config.optimizer == "adamw":
        if not bucket_decay_applies(config, model.arch):
            return torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
        rest = [parameter for parameter in model.parameters() if parameter is not model.w1]
        groups: list[dict[str, Any]] = [{"params": rest, "weight_decay": config.weight_decay},
                                        {"params": [model.w1], "weight_decay": config.bucket_decay}]
        return torch.optim.AdamW(groups, lr=config.lr)
    return torch.optim.Adam(model.parameters(), lr=config.lr)


def scale_set(config: TrainConfig) -> float:
    """The evaluation's sigmoid scale of a config that evaluation_scale has completed."""
    assert config.eval_k is not None, "evaluation_scale sets eval_k before training"
    return config.eval_k


def evaluation_scale(config: TrainConfig, train: Split, side: str = "training") -> float:
    """The sigmoid scale of the evaluation being trained: --eval-k; else, with a base, the K' at
    which the base alone best fits the targets of `train` (the training positions, or the measured
    ones that `side` names: so that the network learns a correction on the base's own centipawn
    scale); else K."""
    if config.eval_k is not None:
        return config.eval_k
    if config.base == NO_BASE:
        return config.k
    k, loss = fit_scale(train.base.astype(np.float64), train.target)
    say(f"base: {BASES[config.base]} evaluation, {side} loss {loss:.6f} at its best scale {k:.1f}, "
        f"the scale the network is trained at")
    return k


def train_epoch(config: TrainConfig, model: Model, optimizer: torch.optim.Optimizer, train: Split,
                epoch: int) -> float:
    """One pass over the training positions in a seeded order; the mean of the batches' losses."""
    order = np.random.default_rng([config.seed, epoch]).permutation(len(train))
    steps = math.ceil(len(train) / config.batch_size)
    total = 0.0
    with tqdm(total=steps, desc=f"epoch {epoch + 1}/{config.epochs}", disable=None, leave=False,
              file=sys.stderr) as bar:
        for step in range(steps):
            rows = order[step * config.batch_size:(step + 1) * config.batch_size]
            for group in optimizer.param_groups:
                group["lr"] = learning_rate(config, (epoch * steps + step) / (config.epochs * steps))
            target = torch.from_numpy(train.target[rows])
            predicted = torch.sigmoid(model(train.batch(rows)) * (model.arch.scale / scale_set(config)))
            loss = torch.mean((predicted - target) ** 2)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            model.clip_()
            total += loss.item() * len(rows)
            bar.update()
            if step % 20 == 0:
                bar.set_postfix(loss=f"{loss.item():.5f}")
    return total / len(train)


def save_checkpoint(path: Path, model: Model, optimizer: torch.optim.Optimizer, epoch: int,
                    history: dict[str, list[float]], command: str) -> None:
    """Write a checkpoint (weights, optimizer state, epochs done, losses, command) atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch,
                "history": history, "arch": dataclasses.asdict(model.arch), "command": command}, partial)
    os.replace(partial, path)


def resume(path: Path, model: Model, optimizer: torch.optim.Optimizer) -> tuple[int, dict[str, list[float]], str]:
    """Load a checkpoint into the model and optimizer: the epochs done, the losses and the first command."""
    state = torch.load(path, weights_only=True)
    if state["arch"] != dataclasses.asdict(model.arch):
        raise ValueError(f"it holds a network {state['arch']}, not the {dataclasses.asdict(model.arch)} asked for")
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return int(state["epoch"]), state["history"], str(state["command"])


def plot_losses(path: Path, curves: dict[str, list[float]], title: str, reference: Optional[float],
                levels: Optional[dict[str, float]] = None) -> None:
    """The loss curve: each named curve per epoch (training, validation; a merge's members), each
    named level as a line (a merged network's loss), and the baseline's loss if measured."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot, ticker

    figure, axes = pyplot.subplots(figsize=(7, 4.5))
    for label, values in curves.items():
        axes.plot(range(1, len(values) + 1), values, marker=".", label=label)
    for label, value in (levels or {}).items():
        axes.axhline(value, color="black", label=label)
    if reference is not None:
        axes.axhline(reference, color="grey", linestyle="--", label="hand-written evaluation (validation)")
    axes.set_xlabel("epoch")
    axes.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
    axes.set_ylabel("loss (MSE of sigmoid(eval / K))")
    axes.set_title(title, fontsize=10)
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    pyplot.close(figure)


def summary(arch: Architecture) -> str:
    """The architecture in a few words: 'H 128, SCReLU, 1 output bucket'."""
    plural = "s" if arch.buckets > 1 else ""
    base = f", on the {BASES[arch.base]} evaluation" if arch.base != NO_BASE else ""
    inputs = f", inputs {LAYOUTS[arch.layout]}" if arch.layout != NO_KING_BUCKETS else ""
    return f"H {arch.hidden}, {ACTIVATIONS[arch.activation]}, {arch.buckets} output bucket{plural}{base}{inputs}"


def settings(config: TrainConfig, arch: Architecture) -> str:
    """The description's line of settings. A merge trains nothing: its members' commands give
    their seeds, epochs and optimizer, so it names only what it measures with (lambda, K, scale)."""
    measured = f"lambda {config.lam:g}, K {config.k:g}, evaluation scale {config.eval_k:g}"
    if config.merge:
        return f"merged {len(config.merge)} members (each one's settings in its command); {measured}"
    return (f"seed {config.seed}, {measured}, epochs {config.epochs}, batch {config.batch_size}, {config.optimizer} "
            f"lr {config.lr:g} to {config.lr_final:g} (cosine), weight decay "
            f"{config.weight_decay if config.optimizer == 'adamw' else 0:g}"
            + (f" (king buckets' rows {config.bucket_decay:g})" if bucket_decay_applies(config, arch) else "")
            + f", threads {config.threads}")


def describe(config: TrainConfig, sources: list[DataFile], arch: Architecture, sizes: tuple[int, int],
             losses: tuple[float, float, float], commands: list[str]) -> str:
    """The network's description: data, filters, command, seed, settings and losses."""
    train_loss, val_loss, quantized_loss = losses
    data = ", ".join(f"{s.path.name} ({s.size:,} bytes, sha256 {s.sha256[:12]})" for s in sources)
    lines = [
        f"Garfish network, trained by {PROG}: {summary(arch)}, QA {arch.qa}, QB {arch.qb}, SCALE {arch.scale}",
        f"data: {data}",
        f"{config.filters.describe()}; "
        + ("results: the Syzygy tables' where a game reaches them; " if config.syzygy is not None else "")
        + f"validation: {config.val_fraction:g} of the games (seed {config.val_seed}); "
        f"{sizes[0]:,} training and {sizes[1]:,} validation positions",
        "command: " + commands[0] + "".join(f"; {'member' if config.merge else 'resumed by'}: {command}"
                                            for command in commands[1:]),
        settings(config, arch),
        f"final loss: training {train_loss:.6f}, validation {val_loss:.6f} (quantized network {quantized_loss:.6f})",
    ]
    return "\n".join(lines)


def finish(config: TrainConfig, sources: list[DataFile], model: Model, optimizer: torch.optim.Optimizer,
           splits: tuple[Split, Split], history: dict[str, list[float]], commands: list[str],
           reference: Optional[float], network: Optional[Network] = None,
           members: Optional[list[dict[str, list[float]]]] = None) -> Path:
    """Quantize the model (unless its integer network is given), write the network, its checkpoint
    and loss curve (with the baseline's loss, if measured; a merge's shows its members' curves),
    report the quantization's effect; the network's path."""
    train, val = splits
    float_evals = predict(model, val)
    network = network or quantize(model)
    quantized_evals = network_evaluations(network, val, val.base)
    quantized_loss = sigmoid_loss(quantized_evals, val.target, scale_set(config))
    losses = (history["train"][-1], history["val"][-1], quantized_loss)
    network = dataclasses.replace(network, description=describe(config, sources, model.arch, (len(train), len(val)),
                                                                 losses, commands))
    config.output.mkdir(parents=True, exist_ok=True)
    path = write_network(network, config.output)
    save_checkpoint(path.with_suffix(".pt"), model, optimizer, len(history["val"]), history, commands[0])
    title = f"{path.name}: {summary(model.arch)}"
    if members:
        curves = {f"member {number} (validation)": member["val"] for number, member in enumerate(members, 1)}
        plot_losses(path.with_suffix(".png"), curves, title, reference, {"merged network (validation)": losses[1]})
    else:
        plot_losses(path.with_suffix(".png"), {"training": history["train"], "validation": history["val"]}, title,
                    reference)
    difference = np.abs(quantized_evals - float_evals)
    say(f"quantized against float evaluation on the validation positions: mean |difference| "
        f"{difference.mean():.2f} cp, max {difference.max():.1f} cp")
    network_k, network_best = fit_scale(float_evals, val.target)
    say(f"network: validation loss {losses[1]:.6f} (quantized {quantized_loss:.6f}; {network_best:.6f} at its "
        f"best K' = {network_k:.0f}), training loss {losses[0]:.6f}")
    return path


def run(config: TrainConfig) -> int:
    """Train, write the network, its loss curve and checkpoint; 0 on success, 2 on bad data or checkpoint."""
    torch.set_num_threads(config.threads)
    torch.use_deterministic_algorithms(True)
    try:
        sources, positions = read_data(config)
        train, val = split_data(config, table_results(config, positions))
    except DataError as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return 2
    if config.merge:
        return merge(config, sources, (train, val))
    if config.measure:
        return measure(config, (train, val))
    torch.manual_seed(config.seed)
    model = Model(Architecture(config.hidden, config.buckets, config.activation, config.qa, config.qb, config.scale,
                               config.base, config.layout))
    config = dataclasses.replace(config, eval_k=evaluation_scale(config, train))
    optimizer = make_optimizer(config, model)
    history: dict[str, list[float]] = {"train": [], "val": []}
    start, commands = 0, [config.command]
    if config.resume:
        try:
            start, history, first = resume(config.resume, model, optimizer)
        except (ValueError, OSError, KeyError, RuntimeError) as error:
            print(f"{PROG}: cannot resume from {config.resume}: {error}", file=sys.stderr)
            return 2
        commands = [first, config.command]
        say(f"resumed from {config.resume} after epoch {start}")
    reference = baseline(config, val)[1] if config.baseline else None
    checkpoint = config.checkpoint or config.output / "checkpoint.pt"
    say(f"training {summary(model.arch)} on {len(train):,} positions, epochs {start + 1}-{config.epochs}, "
        f"{config.threads} thread(s)")
    started = time.perf_counter()
    for epoch in range(start, config.epochs):
        epoch_start = time.perf_counter()
        history["train"].append(train_epoch(config, model, optimizer, train, epoch))
        history["val"].append(sigmoid_loss(predict(model, val), val.target, scale_set(config)))
        save_checkpoint(checkpoint, model, optimizer, epoch + 1, history, commands[0])
        say(f"epoch {epoch + 1}/{config.epochs}: training loss {history['train'][-1]:.6f}, validation loss "
            f"{history['val'][-1]:.6f}, lr {optimizer.param_groups[0]['lr']:.2e}, "
            f"{time.perf_counter() - epoch_start:.1f} s")
    say(f"training time {time.perf_counter() - started:.0f} s for {max(0, config.epochs - start)} epoch(s)")
    path = finish(config, sources, model, optimizer, (train, val), history, commands, reference)
    checkpoint.unlink(missing_ok=True)  # superseded by the network's own
    if reference is not None:
        say(f"hand-written evaluation: validation loss {reference:.6f} at its best K'")
    say(f"loss curve {path.with_suffix('.png')}, checkpoint {path.with_suffix('.pt')}")
    say(str(path))
    return 0


def merge(config: TrainConfig, sources: list[DataFile], splits: tuple[Split, Split]) -> int:
    """--merge: the members' networks as one (train.model.merge_models), measured and written as a
    trained one is; 0 on success, 2 for a checkpoint that cannot be read or merged."""
    train, val = splits
    models, histories, commands = [], [], []
    try:
        for path in config.merge:
            state = torch.load(path, weights_only=True)
            model = Model(Architecture(**state["arch"]))
            model.load_state_dict(state["model"])
            models.append(model)
            histories.append(state["history"])
            commands.append(str(state["command"]))
        merged = merge_models(models)
        network = merge_networks([quantize(model) for model in models])
    except (ValueError, OSError, KeyError, TypeError, RuntimeError) as error:
        print(f"{PROG}: cannot merge {path if len(models) < len(config.merge) else 'the checkpoints'}: {error}",
              file=sys.stderr)
        return 2
    config = dataclasses.replace(config, eval_k=evaluation_scale(config, train))
    eval_k = scale_set(config)
    reference = baseline(config, val)[1] if config.baseline else None
    for number, (path, history) in enumerate(zip(config.merge, histories), 1):
        say(f"member {number}: {path}, validation loss {history['val'][-1]:.6f} after {len(history['val'])} epoch(s)")
    history = {"train": [sigmoid_loss(predict(merged, train), train.target, eval_k)],
               "val": [sigmoid_loss(predict(merged, val), val.target, eval_k)]}
    say(f"merged {len(models)} networks into {summary(merged.arch)}, QB {merged.arch.qb}")
    path = finish(config, sources, merged, make_optimizer(config, merged), splits, history,
                  [config.command] + commands, reference, network, histories)
    if reference is not None:
        say(f"hand-written evaluation: validation loss {reference:.6f} at its best K'")
    say(str(path))
    return 0


def network_evaluations(network: Network, val: Split, classic: np.ndarray) -> np.ndarray:
    """A network file's integer evaluations (engine.evaluation.network.forward's) of the validation positions,
    with its own output buckets, input layout and base (`classic`: the hand-written evaluations)."""
    side = dataclasses.replace(val, buckets=len(network.b2), layout=network.layout,
                               base=classic if network.base == CLASSIC_BASE else np.zeros_like(classic))
    parts = []
    for start in range(0, len(side), EVAL_BATCH):
        picked = np.arange(start, min(start + EVAL_BATCH, len(side)))
        parts.append(integer_forward(network, side.inputs(picked), np.arange(len(picked))).double().numpy())
    return np.concatenate(parts) if parts else np.zeros(0)


def measure(config: TrainConfig, splits: tuple[Split, Split]) -> int:
    """--measure: each network file's loss on the validation positions, at the run's scale and at its
    own best K'; 0, or 2 for a file that is not a network."""
    train, val = splits
    config = dataclasses.replace(config, eval_k=evaluation_scale(config, train) if len(train) else
                                 evaluation_scale(config, val, "validation"))
    reference = baseline(config, val)[1] if config.baseline else None
    classic = val.base if config.base == CLASSIC_BASE else classic_evaluations(val.positions, val.rows, val.mirror)
    for path in config.measure:
        try:
            network = read_network(path)
        except NetworkError as error:
            print(f"{PROG}: {error}", file=sys.stderr)
            return 2
        evals = network_evaluations(network, val, classic)
        best_k, best = fit_scale(evals, val.target)
        shape = summary(Architecture(len(network.b1), len(network.b2), network.activation, network.qa, network.qb,
                                     network.scale, network.base, network.layout))
        say(f"{path}: validation loss {sigmoid_loss(evals, val.target, scale_set(config)):.6f} at K' = "
            f"{scale_set(config):.1f} ({best:.6f} at its best K' = {best_k:.0f}); {shape}")
    if reference is not None:
        say(f"hand-written evaluation: validation loss {reference:.6f} at its best K'")
    return 0
