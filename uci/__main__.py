"""`python -m garfish.uci`: the `garfish` command (garfish.cli), as before 0.3.0."""

import sys

from garfish.cli import main

sys.exit(main())
