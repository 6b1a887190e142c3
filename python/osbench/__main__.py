import sys

from osbench.cli import main

sys.exit(main())
