"""`python -m perft`: the same as `garfish perft`."""

import sys

from perft.cli import main

sys.exit(main())
