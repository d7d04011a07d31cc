"""The Python examples of the docs run as written."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.conftest import ROOT, SAFETY_S


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_adding_a_method_from_your_own_code_runs_as_written(tmp_path):
    """docs/methods.md, "Adding a method": `my_rules.py` and the lines that run its methods on the batched engines
    (they used `problem` and `keys` without saying where they came from: a NameError as written)."""
    blocks = _python_blocks((ROOT / "docs" / "methods.md").read_text())
    rules = next(b for b in blocks if b.startswith("# my_rules.py"))
    use = next(b for b in blocks if "import my_rules" in b)
    (tmp_path / "my_rules.py").write_text(rules)
    script = use + "\nprint(problem.n_arms, keys.shape[0])\n"
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          timeout=SAFETY_S, env={"PYTHONPATH": f"{tmp_path}:{ROOT}", "PATH": ""})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["3", "50"]
