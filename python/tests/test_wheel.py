"""The wheel a user installs: built by maturin from this checkout (the dev profile here,
so the extension compiled for the other tests is reused; `make wheel` builds the same
wheel in release), installed into a fresh virtual environment, and the README's Python
example run from outside the repository."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pyarrow as pa

REPO = Path(__file__).resolve().parents[2]


def run(args: list[str | Path], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{args}: {done.stdout[-2000:]}{done.stderr[-4000:]}"
    return done.stdout


def readme_python_example() -> tuple[str, str]:
    """The README's first Python example and the output shown after it."""
    text = (REPO / "README.md").read_text()
    found = re.search(r"```python\n(.*?)```\s*```text\n(.*?)```", text, re.S)
    assert found, "README.md has a Python example followed by its output"
    return found.group(1), found.group(2)


def test_the_wheel_installs_into_a_fresh_venv_and_runs_the_readme_example(tmp_path: Path) -> None:
    bin_dir = Path(sys.executable).parent
    wheels = tmp_path / "wheels"
    run([bin_dir / "maturin", "build", "--quiet", "--locked", "--profile", "dev", "--out", wheels], cwd=REPO / "python")
    [wheel] = list(wheels.glob("*.whl"))
    # One wheel for every CPython from 3.11: the stable ABI.
    assert re.fullmatch(r"arrowfeat-0\.1\.0-cp311-abi3-.+\.whl", wheel.name), wheel.name
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert any(n.startswith("arrowfeat/_native") and n.endswith(".abi3.so") for n in names), names
    assert "arrowfeat/py.typed" in names
    assert any(n.endswith("licenses/LICENSE") for n in names), names
    for line in (
        "Requires-Python: >=3.11",
        "License-Expression: Apache-2.0",
        "Requires-Dist: pyarrow>=18",
        "Classifier: Programming Language :: Rust",
        "Classifier: Programming Language :: Python :: 3.11",
        "Project-URL: Repository, https://github.com/arrowfeat/arrowfeat",
        "Description-Content-Type: text/markdown",
    ):
        assert line in metadata, line
    assert "## Quick start" in metadata  # the README is the description

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", venv], cwd=tmp_path)
    pip = [venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--retries", "10", "--timeout", "60"]
    # pyarrow at the version of the test environment: pip's cache has it.
    run([*pip, wheel, f"pyarrow=={pa.__version__}"], cwd=tmp_path)

    work = tmp_path / "outside"
    (work / "examples" / "data").mkdir(parents=True)
    shutil.copy(REPO / "examples" / "data" / "events.parquet", work / "examples" / "data")
    example, shown = readme_python_example()
    (work / "example.py").write_text(example)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    out = run([venv / "bin" / "python", "example.py"], cwd=work, env=env)
    assert out.strip() == shown.strip()
    where = run([venv / "bin" / "python", "-c", "import arrowfeat; print(arrowfeat.__file__)"], cwd=work, env=env)
    assert Path(where.strip()).is_relative_to(venv), where
