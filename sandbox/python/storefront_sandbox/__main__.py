"""``python -m storefront_sandbox ARGS`` runs the installed ``storefront-sandbox ARGS``."""

import os
import sys

from storefront_sandbox import binary_path

program = binary_path()
os.execv(program, [program, *sys.argv[1:]])
