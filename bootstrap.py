"""Run buraco-p2p from a fresh checkout with nothing but python3.

`python3 bootstrap.py play` plays; `python3 bootstrap.py test` runs the whole check
(ruff, mypy, pytest). Both first make `.venv/` and install the package with its
dependencies there, once, and again only when pyproject.toml changes.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / "buraco-p2p.installed"
SOURCES = ("buraco_p2p", "protocol", "sim", "tests", "benchmarks")


def _python() -> str:
    return str(BIN / ("python.exe" if os.name == "nt" else "python"))


def ensure_env() -> None:
    want = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == want:
        return
    if not BIN.exists():
        print("bootstrap: creating .venv", file=sys.stderr)
        try:
            venv.EnvBuilder(with_pip=True).create(VENV)
        except subprocess.CalledProcessError:
            # Some distributions ship venv without ensurepip; the system's pip can still
            # install into a venv made without pip of its own (pip >= 22.3, --python).
            venv.EnvBuilder(with_pip=False, clear=True).create(VENV)
    print("bootstrap: installing buraco-p2p and its dependencies into .venv", file=sys.stderr)
    if _has_pip(_python()):
        pip = [_python(), "-m", "pip"]
    else:
        pip = [sys.executable, "-m", "pip", "--python", _python()]
    install = [*pip, "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*install, "-e", f"{ROOT}[dev]"], check=True)
    STAMP.write_text(want)


def _has_pip(python: str) -> bool:
    probe = [python, "-c", "import pip"]
    return subprocess.run(probe, capture_output=True).returncode == 0


def run(argv: list[str]) -> int:
    cmd = argv[0] if argv else "play"
    rest = argv[1:]
    ensure_env()
    py = _python()
    if cmd == "play":
        return subprocess.call([py, "-m", "buraco_p2p", "play", *rest], cwd=ROOT)
    if cmd == "test":
        for step in (
            [py, "-m", "ruff", "check", "bootstrap.py", *SOURCES],
            [py, "-m", "mypy"],
        ):
            code = subprocess.call(step, cwd=ROOT)
            if code:
                return code
        return subprocess.call([py, "-m", "pytest", *rest], cwd=ROOT)
    if cmd == "env":
        return 0
    print(f"usage: python3 bootstrap.py [play|test|env] [args...]  (got {cmd!r})", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
