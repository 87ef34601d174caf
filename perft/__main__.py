"""`python -m garfish.perft`: the same as `garfish perft`."""

import sys

from garfish.perft.cli import main

sys.exit(main())
