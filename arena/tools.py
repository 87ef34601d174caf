"""What the command-line tools (garfish epd, match, datagen) share: their exit codes and the --cluster check.

Kept apart from driver.py (one engine process), which cluster.py imports: the --cluster check imports
cluster.py to see that Dask is installed.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_ENGINE = 1  # an engine failed to start or run
EXIT_USAGE = 2  # bad arguments or input files
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl-C
CLUSTER_HINT = ("--cluster needs Dask's distributed package: pip install 'garfish[cluster]' "
                "(in a checkout: .venv/bin/python -m pip install -e '.[cluster]')")


def check_cluster(address: str) -> None:
    """The tools' --cluster value is usable and Dask's distributed is installed (ValueError otherwise)."""
    try:
        from garfish.arena import cluster
    except ImportError:
        raise ValueError(CLUSTER_HINT) from None
    cluster.check_address(address)
