"""Write a network of random weights (for speed measurements and tests, not for play).

    python scripts/random_network.py FOLDER [--hidden 128] [--buckets 8] [--activation screlu] [--seed 1]

The weights are uniform integers in about the ranges a trained network's take (W1 within
+-60 and b1 0-80 on QA = 255's scale, W2 within +-64 on QB = 64's, b2 within +-5000), so its
accumulators clip as a real network's do. Prints the path written (nn-<hash>.gfnn in FOLDER).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional

import numpy as np

from garfish.engine.evaluation.network import CRELU, FEATURES, SCRELU, Network, write_network

ACTIVATIONS = {"crelu": CRELU, "screlu": SCRELU}


def random_network(activation: int, hidden: int, buckets: int, seed: int) -> Network:
    """A network of random integer weights in realistic ranges (QA 255, QB 64, SCALE 400)."""
    rng = np.random.default_rng(seed)
    return Network(activation, 255, 64, 400,
                   rng.integers(-60, 60, (FEATURES, hidden), dtype=np.int16),
                   rng.integers(0, 80, hidden, dtype=np.int16),
                   rng.integers(-64, 64, (buckets, 2 * hidden), dtype=np.int16),
                   rng.integers(-5000, 5000, buckets, dtype=np.int32),
                   f"random weights, seed {seed} (scripts/random_network.py)")


def main(argv: Optional[list[str]] = None) -> int:
    """Write the network and print its path."""
    parser = argparse.ArgumentParser(prog="random_network.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="where to write nn-<hash>.gfnn")
    parser.add_argument("--hidden", type=int, default=128, help="accumulator size H (default 128)")
    parser.add_argument("--buckets", type=int, default=8, help="output buckets (default 8)")
    parser.add_argument("--activation", choices=sorted(ACTIVATIONS), default="screlu")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    args.folder.mkdir(parents=True, exist_ok=True)
    network = random_network(ACTIVATIONS[args.activation], args.hidden, args.buckets, args.seed)
    print(write_network(network, args.folder))
    return 0


if __name__ == "__main__":
    sys.exit(main())
