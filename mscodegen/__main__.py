import sys

from mscodegen.cli import main

sys.exit(main())
