"""``python -m hmb_cmd ...``: the ``hmb`` command, e.g. before it is installed."""

import sys

from hmb_cmd import main

if __name__ == "__main__":
    sys.exit(main())
