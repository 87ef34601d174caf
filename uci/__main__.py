"""`python -m garfish.uci`: the same as the `garfish` command."""

import sys

from garfish.uci.main import main

sys.exit(main())
