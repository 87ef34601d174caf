"""The evaluation: the network's file format and exact forward pass (network), its kernels and
incremental update (nnue), finding an EvalFile (evalfile), the hand-written evaluation (classic) and the
win/draw/loss model (wdl)."""
