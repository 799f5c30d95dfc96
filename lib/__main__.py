import sys

from lib.cli.commands import main

sys.exit(main())
