"""coverage.py's command line, loaded from Reprobot's tools folder behind the project's own paths.

Appending (not prepending) the tools folder keeps the project's own packages first on sys.path.
"""

import sys

sys.path.append("/opt/reprobot/tools")

from coverage.cmdline import main

sys.exit(main())
