"""Which evaluation the engine uses: the EvalFile value, its default, and where network files are found.

Imports neither NumPy nor Numba (the network modules load when a network is asked for), so the
UCI layer declares its option from here before the engine has loaded.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from garfish.engine.evaluation.nnue import NetworkEvaluator

CLASSIC = "<classic>"  # the EvalFile value of the hand-written evaluation (engine.evaluation.classic)
# The engine's evaluation when none is chosen: CLASSIC, or the name of a network file shipped
# in NETS_DIR (nn-<hash>.gfnn) to make that network the default (how it was made and how it
# played against CLASSIC: NETS_DIR / "README.md").
DEFAULT_EVAL_FILE = "nn-6bcd9bb8b319.gfnn"
NETS_DIR = Path(__file__).resolve().parent.parent / "nets"  # the networks shipped with the engine


def is_classic(value: str) -> bool:
    """Whether an EvalFile value asks for the hand-written evaluation (CLASSIC, or nothing)."""
    return value.strip() in ("", CLASSIC)


def find_eval_file(value: str, cwd: Optional[Path] = None, nets: Optional[Path] = None) -> Path:
    """The network file an EvalFile value names: the path itself, a relative one taken from the
    working folder (cwd, by default the process's) and, when not there, from the nets folder
    (by default NETS_DIR). engine.evaluation.network.NetworkError when neither holds it."""
    from garfish.engine.evaluation.network import NetworkError

    nets = nets or NETS_DIR
    folder = cwd or Path.cwd()
    path = Path(value).expanduser()
    if path.is_absolute():
        if not path.exists():
            raise NetworkError("no such file")
        return path
    for candidate in (folder / path, nets / path):
        if candidate.exists():
            return candidate
    raise NetworkError(f"no such file in the working folder ({folder}) nor in the engine's nets folder ({nets})")


def load_evaluator(value: str, cwd: Optional[Path] = None, nets: Optional[Path] = None) -> Optional[NetworkEvaluator]:
    """The evaluator an EvalFile value selects: None for the hand-written evaluation, else the
    network of the file find_eval_file finds (engine.evaluation.network.NetworkError, with the reason, when
    it is missing or cannot be used)."""
    if is_classic(value):
        return None
    from garfish.engine.evaluation.network import read_network
    from garfish.engine.evaluation.nnue import NetworkEvaluator

    path = find_eval_file(value, cwd, nets)
    return NetworkEvaluator(read_network(path), path.name)
