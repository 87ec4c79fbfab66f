import sys

from buraco_p2p.cli import main

sys.exit(main())
