"""`python -m uci`: the same as the `garfish` command."""

import sys

from uci.main import main

sys.exit(main())
