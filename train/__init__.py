"""`garfish train`: train the evaluation network of engine/evaluation/network.py on labelled positions.

- `data.py`: read `FEN;SCORE;BEST;RESULT` files, filter them, split them by game, cache the
  parsed positions and turn them into the network's features.
- `rows.py`: a batch's features and base evaluations from the positions' bitboards (Numba),
  made when the batch is needed, so that tens of millions of positions fit in memory.
- `model.py`: the network in PyTorch (float training in the quantized scale), its
  quantization to a `garfish.engine.evaluation.network.Network` and an integer forward pass.
- `config.py`: `TrainConfig`, everything a training run needs, filled in by the command line.
- `trainer.py`: the training run, the baseline of the hand-written evaluation, the loss curve.
- `cli.py`: the command line; it needs no PyTorch until training starts.
"""
