"""What a results folder records about its experiment: identity, code, arms and dataset.

Plots, reports and ``recommend`` read these records only, so a results folder
answers "which experiment, which arms, which code" on its own, after it is
moved or its dataset is deleted.

* :func:`config_hash` hashes an experiment's identity (resolved config, dataset
  name and content, arm set by configuration name); every result row carries it.
* :func:`code_hash` hashes the source of every module that computes cells (the
  engines and everything they import); it is part of every cell key, so an
  edited engine never serves a stale cell.
* :func:`arms_table` is ``arms.csv``: each arm by name with its metadata,
  population means, costs, ``nu``, Pareto membership and gaps (paper §3).
"""

from __future__ import annotations

import ast
import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import cabench
from cabench.pareto import classification_gaps, pareto_mask
from cabench.problem import Problem

#: Modules whose source determines a cell's result, with everything they import.
CELL_MODULES = ("cabench.cells",)
ARM_COLUMNS = ["arm", "config_id", "model", "temperature", "max_new_tokens", "prompting"]


def stable_hash(payload: Any, length: int = 16) -> str:
    """SHA-256 (hex, first ``length`` characters) of ``payload`` as canonical JSON."""
    text = json.dumps(payload, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def config_hash(identity: dict[str, Any]) -> str:
    """The experiment's identity hash (resolved config, dataset content, arm names)."""
    return stable_hash(identity)


def _module_file(package: Path, module: str) -> Path | None:
    parts = module.split(".")[1:]
    base = package.joinpath(*parts) if parts else package
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """``cabench`` modules imported by a parsed module (absolute and relative imports)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "cabench")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parent = module.split(".")
                parent = parent[: len(parent) - node.level + (1 if is_package else 0)]
                base = ".".join(parent + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base.split(".")[0] != "cabench":
                continue
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)  # submodules imported by name
    return found


def source_files(roots: tuple[str, ...] = CELL_MODULES, package: Path | None = None) -> list[Path]:
    """Every source file reachable by imports from ``roots``, with their parent packages."""
    package = package or Path(cabench.__file__).resolve().parent
    seen: dict[str, Path] = {}
    todo = list(roots)
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        path = _module_file(package, module)
        if path is None:
            continue  # a name imported from a module, not a module
        seen[module] = path
        parts = module.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]
        tree = ast.parse(path.read_text(), filename=str(path))
        todo += sorted(_imports(tree, module, path.name == "__init__.py"))
    return sorted(set(seen.values()))


@cache
def code_hash() -> str:
    """SHA-256 of the source of every module that computes cells (part of every cell key)."""
    package = Path(cabench.__file__).resolve().parent
    h = hashlib.sha256()
    for path in source_files(package=package):
        h.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def arms_table(problem: Problem, configs: pd.DataFrame | None, objectives: tuple[str, ...]) -> pd.DataFrame:
    """``arms.csv``: one row per arm of the experiment, by configuration name.

    Population means ``mu`` (one column per objective), single-point
    hypervolume ``H`` and ``nu = H / mu^c`` (paper §3.1), ``Delta = nu* - nu``,
    Pareto membership within the experiment's arms and the classification gap
    ``gamma`` of eq. (1).
    """
    mu = np.asarray(problem.mu, dtype=float)
    _, _, gamma, _ = classification_gaps(mu.copy())
    nu = problem.nu
    out = pd.DataFrame({"arm": np.arange(problem.n_arms), "config_id": list(problem.arm_names)})
    if configs is not None:
        meta = configs.set_index("config_id").loc[list(problem.arm_names)]
        for col in ARM_COLUMNS[2:]:
            out[col] = meta[col].to_numpy()
    else:
        for col in ARM_COLUMNS[2:]:
            out[col] = ""
    for d, name in enumerate(objectives):
        out[f"mu_{name}"] = mu[:, d]
    out["cost_tokens"] = problem.profile_cost
    out["mu_cost"] = problem.mu_cost
    out["hv"] = problem.hv
    out["nu"] = nu
    out["delta"] = nu.max() - nu
    out["optimal"] = (np.arange(problem.n_arms) == int(np.argmax(nu))).astype(int)
    out["pareto"] = pareto_mask(mu).astype(int)
    out["gamma"] = gamma
    return out


def objective_columns(arms: pd.DataFrame) -> list[str]:
    """The ``mu_<objective>`` columns of an ``arms.csv``, in objective order."""
    return [c for c in arms.columns if c.startswith("mu_") and c != "mu_cost"]
