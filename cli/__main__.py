"""`python -m garfish.cli`: the `garfish` command."""

import sys

from garfish.cli import main

sys.exit(main())
