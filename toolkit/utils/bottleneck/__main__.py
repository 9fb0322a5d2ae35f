"""Entry point of ``python -m toolkit.utils.bottleneck``."""

import sys

from . import main

sys.exit(main())
