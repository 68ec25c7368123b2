"""``python -m amct_ops {info,selftest,bench}``: see :mod:`amct_ops._cli`."""
import sys

from amct_ops._cli import main

if __name__ == "__main__":
    sys.exit(main())
