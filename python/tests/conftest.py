"""The tests use the package in place and the checkout's bin/emuctl (make build)."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
os.environ.setdefault("EMUCTL", str(ROOT / "bin" / "emuctl"))
