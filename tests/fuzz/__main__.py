"""``python -m tests.fuzz``: the on-demand fuzz campaign (see campaign.py)."""

import sys

from .campaign import main

sys.exit(main())
