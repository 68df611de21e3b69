"""``python -m nczarr.cli``: the ``nczarr`` command without its console script."""

import sys

from nczarr.cli import command

sys.exit(command())
