import sys

from protocol.gen.files import main

sys.exit(main())
